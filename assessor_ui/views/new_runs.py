"""Evaluate a run that never contributed to the pool against a finished job.

A researcher uploads a TREC run; its unpooled documents are scored for the job (here
when few, else on the workers, while the page polls) and its model-assisted estimates
are shown beside the pooled runs', marked "not in the pool". The uploaded run is kept
with the job (:func:`~nuggets_app.evaluation.services.new_runs.new_run_keep`): the job
page lists it, its page can be reopened, and the runs page gives it the same figures.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from assessor_ui.forms.assessor import NewRunForm, TopUpForm
from assessor_ui.views.calibration import calibration_context
from assessor_ui.views.decorators import researcher_required, staff_required
from nuggets_app.evaluation.services import new_runs, outside_pool, run_uploads, top_ups
from nuggets_app.evaluation.services.estimates import (
    FLAG_NOTE,
    INTERVAL_NOTE,
    MODEL_ONLY_NOTE,
    EstimateError,
    estimate_sample,
    flag_reason,
    job_model_only_topics,
)
from nuggets_app.inference.services.unpooled import (
    UnpooledError,
    new_documents_score,
    unpooled_progress,
)
from nuggets_app.models import JobNewRun, MatchJob, Sample

TEMPLATE = "assessor_ui/jobs/new_runs.html"


def _samples(job: MatchJob) -> list[Sample]:
    pool_id = job.pool_id or (job.sample.pool_id if job.sample is not None else None)
    if pool_id is None:
        return []
    return list(
        Sample.objects.filter(pool_id=pool_id)
        .exclude(method__in=Sample.NOT_STATAP)
        .order_by("name")
    )


@researcher_required
def job_new_run(request: HttpRequest, pk: int) -> HttpResponse:
    """The upload form and the job's kept new runs (GET); the uploaded run is kept,
    its unpooled documents sent to be scored, and its page opened (POST)."""
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    form = NewRunForm(
        request.POST or None, request.FILES or None, samples=_samples(job)
    )
    context = {"job": job, "form": form, "kept": _kept(job)}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["run"]
        try:
            name, scores = run_uploads.run_upload_read(upload.name, upload.chunks())
            sample = estimate_sample(job, _sample_name(form.cleaned_data["sample"]))
            if sample is None:
                raise EstimateError(
                    f"job {job.pk}'s pool has no sample to estimate from"
                )
            kept = new_runs.new_run_keep(
                job=job, sample=sample, name=name, scores=scores, user=request.user
            )
            new_runs.new_runs_evaluate(job=job, sample=sample, new_runs={name: scores})
        except EstimateError as error:
            form.add_error(None, str(error))
            # A bad run file: every problem, one per line.
            for problem in getattr(error, "problems", []):
                form.add_error(None, problem)
        else:
            return redirect("job-new-run-kept", pk=job.pk, run=kept.pk)
    return render(request, TEMPLATE, context)


@researcher_required
def job_new_run_kept(request: HttpRequest, pk: int, run: int) -> HttpResponse:
    """A kept new run: the workers' progress scoring its documents (the page polls),
    then its estimates beside the pooled runs', as the runs page shows them."""
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    kept = get_object_or_404(JobNewRun, job=job, pk=run)
    context = {
        "job": job,
        "form": NewRunForm(samples=_samples(job)),
        "kept": _kept(job),
        "run_name": kept.name,
    }
    try:
        sample = kept.sample or estimate_sample(job)
        if sample is None:
            raise EstimateError(f"job {job.pk}'s pool has no sample to estimate from")
        found = new_runs.new_runs_evaluate(
            job=job,
            sample=sample,
            new_runs={kept.name: kept.scores},
            inline_max=0,
            enqueue=False,
        )
    except EstimateError as error:
        context["error"] = str(error)
        return render(request, TEMPLATE, context)
    if found.estimates is None:
        context["pending"] = unpooled_progress(job=job, wanted=found.wanted)
    else:
        context.update(_result(found, job, sample))
        context.update(_top_up(request, found, kept))
    return render(request, TEMPLATE, context)


def _top_up(
    request: HttpRequest, found: new_runs.NewRunsEvaluation, kept: JobNewRun
) -> dict:
    """The run's interval parts, the top-up it needs and its top-up samples."""
    figures = found.figures.get(kept.name)
    if figures is None:
        return {}
    try:
        half = float(request.GET.get("width", 2 * outside_pool.TARGET_HALF_WIDTH)) / 2
    except ValueError:
        half = outside_pool.TARGET_HALF_WIDTH
    half = min(max(half, 0.001), 0.5)
    parts = figures.interval
    sampling, model = parts.half_widths
    return {
        "kept_run": kept,
        "parts": parts,
        "parts_sampling": sampling,
        "parts_model": model,
        "parts_share": round(100 * parts.model_share),
        "parts_sampling_share": 100 - round(100 * parts.model_share),
        "target_width": 2 * half,
        "half_width": figures.half_width,
        "needed": figures.draws_for(half),
        "topped": figures.topped_topics,
        "advice": outside_pool.top_up_advice(
            figures, job_id=kept.job_id, run=kept.name, half_width=half
        ),
        "top_ups": top_ups.top_up_statuses(run=kept),
        "top_up_form": TopUpForm(),
    }


@staff_required
@require_POST
def job_new_run_top_up(request: HttpRequest, pk: int, run: int) -> HttpResponse:
    """Draw a top-up sample of the kept run's documents outside the pool and assign
    it to the assessors of the job's sample (staff)."""
    job = get_object_or_404(MatchJob, pk=pk)
    kept = get_object_or_404(JobNewRun, job=job, pk=run)
    form = TopUpForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"No top-up drawn: {form.errors.as_text()}")
        return redirect("job-new-run-kept", pk=job.pk, run=kept.pk)
    try:
        sample = top_ups.top_up_draw_sample(
            job=job,
            run=kept,
            size=form.cleaned_data["size"],
            seed=kept.top_ups.count() + 1,
        )
    except EstimateError as error:
        messages.error(request, f"No top-up drawn: {error}")
    else:
        count = sample.documents.count()
        messages.info(
            request,
            f"Top-up drawn: {count} documents in {len(sample.draws)} topics, assigned "
            "to the assessors of the job's sample. The figure uses each topic once "
            "all its documents are judged.",
        )
    return redirect("job-new-run-kept", pk=job.pk, run=kept.pk)


def _kept(job: MatchJob) -> list[JobNewRun]:
    return list(JobNewRun.objects.filter(job=job).defer("scores"))


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


def _result(found: new_runs.NewRunsEvaluation, job: MatchJob, sample: Sample) -> dict:
    estimates = found.estimates or {}
    ranked = sorted(
        estimates.values(),
        key=lambda e: (
            -(e.ap.estimate if e.ap.estimate == e.ap.estimate else -1),
            e.name,
        ),
    )
    fewer = outside_pool.fewer_topics(estimates, found.new)
    reasons = {
        name: outside_pool.new_run_flag_reason(
            figures, flag_reason(estimates[name].check)
        )
        for name, figures in found.figures.items()
    }
    rows = [
        {
            "name": e.name,
            "new": e.name in found.new,
            "fewer": fewer.get(e.name, ""),
            "estimate": e.ap.estimate,
            "low": e.ap.ci95[0],
            "high": e.ap.ci95[1],
            "topics": e.ap.n_topics,
            "documents": found.documents.get(e.name),
            "bias_diff": e.check.diff,
            "flagged": e.check.flagged,
            "reason": reasons.get(e.name) or flag_reason(e.check),
        }
        for e in ranked
    ]
    rows = [r for r in rows if not r["fewer"]] + [r for r in rows if r["fewer"]]
    return {
        "rows": rows,
        "relevance": job.relevance_text(),
        "sample": sample,
        "interval_note": INTERVAL_NOTE,
        "flag_note": FLAG_NOTE,
        "model_only_topics": job_model_only_topics(job=job, sample=sample),
        "model_only_note": MODEL_ONLY_NOTE,
        "new_run_note": found.note,
        "rule": found.rule,
        "depth": found.depth,
        "new_documents": [
            (name, found.documents[name]) for name in sorted(found.documents)
        ],
        "fewer_topics": fewer,
        **calibration_context(job, found.calibration),
    }
