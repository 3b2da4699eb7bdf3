"""Evaluate a run that never contributed to the pool against a finished job.

A researcher uploads a TREC run; its unpooled documents are scored for the job (here
when few, else on the workers, while the page polls) and its model-assisted estimates
are shown beside the pooled runs', marked "not in the pool". The uploaded run waits in
the cache (a day) under a random key while the workers score its documents.
"""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from assessor_ui.forms import NewRunForm
from assessor_ui.views.decorators import researcher_required, staff_required
from nuggets_app.evaluation.services import new_runs
from nuggets_app.evaluation.services.estimates import (
    INTERVAL_NOTE,
    MODEL_ONLY_NOTE,
    EstimateError,
    estimate_sample,
    job_model_only_topics,
)
from nuggets_app.inference.services.unpooled import (
    UnpooledError,
    new_documents_score,
    unpooled_progress,
)
from nuggets_app.models import MatchJob, Sample

PENDING_SECONDS = 24 * 3600
TEMPLATE = "assessor_ui/jobs/new_runs.html"


def _samples(job: MatchJob) -> list[Sample]:
    pool_id = job.pool_id or (job.sample.pool_id if job.sample_id else None)
    return list(
        Sample.objects.filter(pool_id=pool_id)
        .exclude(method=Sample.Method.VERIFICATION)
        .order_by("name")
    )


@researcher_required
def job_new_run(request: HttpRequest, pk: int) -> HttpResponse:
    """The upload form (GET) and the evaluation of the uploaded run (POST)."""
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    form = NewRunForm(
        request.POST or None, request.FILES or None, samples=_samples(job)
    )
    context = {"job": job, "form": form}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["run"]
        try:
            name, scores = new_runs.run_upload_read(upload.name, upload.chunks())
            sample = estimate_sample(job, _sample_name(form.cleaned_data["sample"]))
            if sample is None:
                raise EstimateError(
                    f"job {job.pk}'s pool has no sample to estimate from"
                )
            found = new_runs.new_runs_evaluate(
                job=job, sample=sample, new_runs={name: scores}
            )
        except EstimateError as error:
            form.add_error(None, str(error))
        else:
            if found.estimates is None:
                key = uuid.uuid4().hex
                cache.set(
                    _key(job, key),
                    {"name": name, "scores": scores, "sample": sample.pk},
                    PENDING_SECONDS,
                )
                return redirect("job-new-run-pending", pk=job.pk, key=key)
            context.update(_result(found, job, sample))
    return render(request, TEMPLATE, context)


@researcher_required
def job_new_run_pending(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    """Progress of the workers scoring an uploaded run's documents; the estimates once
    they are all scored."""
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    stored = cache.get(_key(job, key))
    if stored is None:
        raise Http404("no such upload (they are kept a day): upload the run again")
    sample = get_object_or_404(Sample, pk=stored["sample"])
    context = {"job": job, "form": NewRunForm(samples=_samples(job))}
    try:
        found = new_runs.new_runs_evaluate(
            job=job, sample=sample, new_runs={stored["name"]: stored["scores"]},
            inline_max=0, enqueue=False,
        )  # fmt: skip
    except EstimateError as error:
        context["error"] = str(error)
        return render(request, TEMPLATE, context)
    if found.estimates is None:
        context["pending"] = unpooled_progress(job=job, wanted=found.wanted)
        context["run_name"] = stored["name"]
    else:
        context.update(_result(found, job, sample))
    return render(request, TEMPLATE, context)


@staff_required
@require_POST
def job_new_documents(request: HttpRequest, pk: int) -> HttpResponse:
    """Score the documents imported after the job for its topics, on the workers
    (again: only those not scored yet)."""
    job = get_object_or_404(MatchJob, pk=pk)
    try:
        progress = new_documents_score(job=job)
    except UnpooledError as error:
        messages.error(request, str(error))
    else:
        messages.info(
            request,
            f"{progress.wanted - progress.scored} (topic, document) pairs sent to the "
            f"workers in {progress.queued_batches} batches",
        )
    return redirect("job-detail", pk=job.pk)


def _sample_name(pk: str) -> str | None:
    if not pk:
        return None
    sample = Sample.objects.filter(pk=int(pk)).first()
    return sample.name if sample else None


def _key(job: MatchJob, key: str) -> str:
    return f"new-run:{job.pk}:{key}"


def _result(found: new_runs.NewRunsEvaluation, job: MatchJob, sample: Sample) -> dict:
    estimates = found.estimates or {}
    ranked = sorted(
        estimates.values(),
        key=lambda e: (
            -(e.ap.estimate if e.ap.estimate == e.ap.estimate else -1),
            e.name,
        ),
    )
    rows = [
        {
            "name": e.name,
            "new": e.name in found.new,
            "estimate": e.ap.estimate,
            "low": e.ap.ci95[0],
            "high": e.ap.ci95[1],
            "topics": e.ap.n_topics,
            "documents": found.documents.get(e.name),
        }
        for e in ranked
    ]
    return {
        "rows": rows,
        "interval_note": INTERVAL_NOTE,
        "model_only_topics": job_model_only_topics(job=job, sample=sample),
        "model_only_note": MODEL_ONLY_NOTE,
        "new_run_note": found.note,
        "rule": found.rule,
        "depth": found.depth,
        "new_documents": [
            (name, found.documents[name]) for name in sorted(found.documents)
        ],
    }
