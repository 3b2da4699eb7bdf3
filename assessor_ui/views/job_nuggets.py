"""What a finished job's nuggets contribute, on its relevance-model card: the model's
held-out log-loss and the default estimate's interval width with and without the nugget
features (:mod:`nuggets_app.evaluation.services.ablation`). Computed when the user asks,
kept until the job, the judgments or the runs change."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.views.decorators import researcher_required
from nuggets_app.evaluation.services.ablation import nugget_contribution
from nuggets_app.models import JobInference, MatchJob


def nugget_value_context(job: MatchJob) -> dict:
    """The card's values: whether the measure applies (a finished job with a fitted
    model), its kept outcome or progress (None before anyone asked) and the URL the
    page polls while it is computed."""
    fitted = JobInference.objects.filter(job=job, model__isnull=False).exists()
    if job.status != MatchJob.Status.DONE or not fitted:
        return {"nugget_value_applies": False}
    outcome = nugget_contribution.peek(job_id=job.pk)
    running = outcome is not None and outcome.status == "running"
    return {
        "nugget_value_applies": True,
        "nugget_value": outcome,
        "computing": outcome if running else None,
        "progress_url": reverse("job-nugget-value-progress", args=[job.pk]),
    }


@researcher_required
@require_POST
def job_nugget_value(request: HttpRequest, pk: int) -> HttpResponse:
    """Start the measure (or find it kept) and go back to the card."""
    job = get_object_or_404(MatchJob, pk=pk)
    nugget_contribution.get(job_id=job.pk)
    return redirect(reverse("job-detail", args=[job.pk]) + "#relevance-model")


@researcher_required
@require_GET
def job_nugget_value_progress(request: HttpRequest, pk: int) -> JsonResponse:
    """The measure's status and progress (the card polls it while computing)."""
    job = get_object_or_404(MatchJob, pk=pk)
    outcome = nugget_contribution.peek(job_id=job.pk)
    return JsonResponse(outcome.as_dict() if outcome else {"status": "none"})
