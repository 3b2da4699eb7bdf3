"""Researcher pages: launch, list and watch matching jobs; inspect a topic's inferred
relevance; choose a decision rule; download exports. Staff and the researchers group
only: everybody else gets 403."""

from __future__ import annotations

import math

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.jobs import LaunchForm, RuleForm
from assessor_ui.views.calibration import calibration_context
from assessor_ui.views.decorators import researcher_required
from assessor_ui.views.errors import error_page
from assessor_ui.views.job_charts import chart_curve, chart_histogram, chart_reliability
from assessor_ui.views.job_nuggets import nugget_value_context
from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.job_topic import job_topic_figures
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference import selectors as inference_selectors
from nuggets_app.inference.services import (
    embeddings,
    export_kinds,
    exports,
    job_changes,
    job_model,
    matching,
    readiness,
    rule_fitting,
)
from nuggets_app.inference.services.unpooled import new_documents_progress
from nuggets_app.ir.spans import text_segments
from nuggets_app.judging.selectors import human_grades
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.learning import relevance_features
from nuggets_app.models import MatchJob, MatchResult

# The job page's downloads, each with its own provenance sidecar.
EXPORT_KINDS = (
    "human",
    "inferred",
    "merged",
    "probabilistic",
    "scores",
    "prels",
    "passages",
)


@researcher_required
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    jobs = MatchJob.objects.select_related("collection", "created_by")[:200]
    return render(request, "assessor_ui/jobs/list.html", {"jobs": jobs})


@researcher_required
def job_launch(request: HttpRequest) -> HttpResponse:
    form = LaunchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = matching.match_job_launch(
                collection=data["collection"],
                topics=data["topic_list"],
                source=data["source"],
                pool=data["pool"],
                sample=data["sample"],
                created_by=request.user,
                name=data["name"],
                params=matching.MatchParams(
                    nugget_filter={
                        "grades": data["grades"],
                        "aspects": data["aspects"],
                    },
                    k=data["k"],
                    lam=data["lam"],
                    stem=data["stem"],
                    stopwords=data["stopwords"],
                ),
            )
        except matching.MatchJobError as exc:
            form.add_error(None, str(exc))
        else:
            # The job page says the job's warnings in its relevance-model card.
            return redirect("job-detail", pk=job.pk)
    return render(request, "assessor_ui/jobs/launch.html", {"form": form})


@researcher_required
@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    rule_form = RuleForm(request.GET or None, job=job)
    context = {
        "job": job,
        "progress": matching.match_job_progress(job),
        "topics": sorted(job.topics.all(), key=lambda t: qid_key(t.qid)),
        "nothing_to_fit": _nothing_to_fit(job),
        "nugget_sources": inference_selectors.job_nugget_sources(job),
        "failed_chunks": job.chunks.filter(status="failed").select_related("topic")[
            :20
        ],
        "kinds": job_export_kinds(job),
        "aggregation": aggregation_of(job.collection),
        "rule_form": rule_form,
        "rule": rule_form.rule(),
        "nugget_filter": nugget_filter_text(job),
        "warnings": readiness.launch_warnings(job),
        "model": job_model.job_inference(job),
        "judgments_changed": job_changes.judgments_changed(job),
        "new_runs": list(job.new_runs.defer("scores")),
        **calibration_context(job),
        "reliability": _reliability(job),
        **nugget_value_context(job),
        "new_documents": new_documents_progress(job=job)
        if job.status == "done"
        else None,
    }
    return render(request, "assessor_ui/jobs/detail.html", context)


def _nothing_to_fit(job: MatchJob) -> bool:
    """A finished job none of whose topics has a judged document: the relevance
    model has nothing to learn from (only rules on the min-span score decide)."""
    if job.status != MatchJob.Status.DONE:
        return False
    return len(readiness.topics_unjudged(job)) == job.topics.count()


def job_export_kinds(job: MatchJob) -> list[tuple[str, str]]:
    """The downloads that apply to the job (prels only come from a sample), each
    with what it holds (qrels kinds)."""
    return [
        (k, exports.QRELS_CONTENTS.get(k, ""))
        for k in EXPORT_KINDS
        if k != "prels" or job.source == MatchJob.Source.SAMPLE
    ]


def nugget_filter_text(job: MatchJob) -> str:
    """The job's nugget filter in words: "grades 1, 2; aspects output, cost"."""
    parts = []
    spec = job.nugget_filter or {}
    if spec.get("assessors"):
        users = get_user_model().objects.filter(pk__in=spec["assessors"])
        names = sorted(u.get_username() for u in users)
        parts.append(f"assessors {', '.join(names)}")
    if spec.get("grades"):
        parts.append(f"grades {', '.join(str(g) for g in spec['grades'])}")
    if spec.get("aspects"):
        parts.append(f"aspects {', '.join(spec['aspects'])}")
    return "; ".join(parts)


def _reliability(job: MatchJob) -> dict | None:
    info = job_model.job_inference(job)
    return chart_reliability((info.fit_info or {}).get("reliability") if info else None)


@researcher_required
@require_POST
def job_fit(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    try:
        summary = job_model.job_model_fit(job=job)
    except relevance_features.RelevanceModelError as exc:
        messages.error(request, f"Not fitted: {exc}")
    else:
        messages.info(
            request,
            f"Fitted on {summary.judged} judged documents ({summary.relevant} "
            f"relevant); p of {summary.documents} documents in {summary.seconds:.2f} s.",
        )
    return redirect("job-detail", pk=pk)


@researcher_required
@require_GET
def job_progress(request: HttpRequest, pk: int) -> JsonResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    return JsonResponse(matching.match_job_progress(job))


@researcher_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    if job.status not in matching.ACTIVE:
        status = job.get_status_display().lower()
        messages.info(request, f"Job {job.pk} is {status} already: nothing to cancel.")
        return redirect("job-detail", pk=job.pk)
    job = matching.match_job_cancel(job=job)
    messages.info(request, f"Job {job.pk} is {job.get_status_display().lower()}.")
    return redirect("job-detail", pk=job.pk)


@researcher_required
@require_POST
def job_resume(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    if not matching.match_job_progress(job)["can_resume"]:
        status = job.get_status_display().lower()
        messages.info(request, f"Job {job.pk} is {status}: nothing to re-run.")
        return redirect("job-detail", pk=pk)
    ids = matching.match_job_resume(job=job)
    messages.info(request, f"Re-queued {len(ids)} chunks.")
    return redirect("job-detail", pk=pk)


@researcher_required
@require_POST
def job_rescore(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    try:
        lam = float(request.POST.get("lam", ""))
    except ValueError:
        lam = math.nan  # match_job_rescore names a lambda outside (0, 1]
    try:
        summary = matching.match_job_rescore(job=job, lam=lam)
    except DomainError as exc:
        messages.error(request, f"Not re-scored: {exc}")
    else:
        earlier = job.scoring_history()[-2]
        messages.info(
            request,
            f"Re-scored {summary.results} results ({summary.changed} changed): pages "
            f"and exports now use {job.scoring_text()}; anything computed before used "
            f"{earlier}.",
        )
    return redirect("job-detail", pk=pk)


@researcher_required
@require_GET
def job_topic(request: HttpRequest, pk: int, qid: str) -> HttpResponse:
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    topic = get_object_or_404(job.topics, qid=qid)
    rule_form = RuleForm(request.GET or None, job=job)
    suggestion = ""
    if request.GET.get("suggest") == "f1":
        rule_form, suggestion = _suggested_rule_form(job, topic)
    figures = job_topic_figures(job=job, topic=topic, rule=rule_form.rule())
    if figures.error:
        messages.error(request, f"{figures.error}; showing the paper rule instead.")
    grades = {d: g for (_, d), g in human_grades([topic.pk]).items()}
    context = {
        "job": job,
        "topic": topic,
        "rule_form": rule_form,
        "rule": figures.rule,
        "suggestion": suggestion,
        "undecided": figures.reason is not None,
        "undecided_reason": {
            readiness.NO_NUGGETS_REASON: "no-nuggets",
            readiness.UNJUDGED_REASON: "nothing",
            readiness.MODEL_UNJUDGED_REASON: "model-unjudged",
        }.get(figures.reason or ""),
        "topic_unjudged": figures.topic_unjudged,
        "topic_has_nuggets": figures.has_nuggets,
        "estimate": figures.estimate,
        "histogram": chart_histogram(figures.histogram),
        "curve": chart_curve(figures.curve),
        "groups": figures.groups,
        "inferred_count": figures.inferred_count,
        "top": _top_inferred(job, topic, figures.top),
        "judged": _judged(job, topic, grades),
        "model": figures.model,
        "by_p": _by_p(job, topic, figures.model),
        "reliability": _reliability(job),
        **nugget_value_context(job),
        "aspects": figures.aspects,
        "semantic_status": embeddings.semantic_status(),
        "semantic_on": embeddings.semantic_on(),
    }
    return render(request, "assessor_ui/jobs/topic.html", context)


def _top_inferred(job, topic, top: list[tuple[int, float | None]]) -> list:
    """The result rows of the best inferred documents (``top``: id and p, in the
    page's order); only those rows are read, without the documents' text."""
    rows = {
        r.document_id: r
        for r in MatchResult.objects.filter(
            job=job, topic=topic, document_id__in=[d for d, _ in top]
        )
        .select_related("document", "nugget")
        .defer("document__text", "document__html")
    }
    out = []
    for doc_id, p in top:
        row = rows[doc_id]
        row.p = p  # type: ignore[attr-defined]  # the model's p, for the template
        out.append(row)
    return out


def _judged(job: MatchJob, topic, grades: dict[int, int]) -> list[dict]:
    """The topic's judged documents with the person's grade, which every page and
    export uses for them (p = 1 or 0): relevant first, then by docno."""
    level = job.relevance_level
    results = {
        r.document_id: r
        for r in MatchResult.objects.filter(
            job=job, topic=topic, document_id__in=list(grades)
        )
        .select_related("document")
        .defer("document__text", "document__html")
    }
    rows = [
        {
            "document_id": doc_id,
            "docno": result.document.docno,
            "grade": grade,
            "relevant": grade >= level,
            "score": result.score,
        }
        for doc_id, grade in grades.items()
        if (result := results.get(doc_id)) is not None
    ]
    rows.sort(key=lambda row: (not row["relevant"], row["docno"]))
    return rows


def _by_p(job, topic, model) -> list[dict]:
    """Unjudged documents by p, with their best nugget's matched spans as evidence,
    and the sentence nearest to a nugget where the document is embedded."""
    if not model.unjudged:
        return []
    results = {
        r.document_id: r
        for r in MatchResult.objects.filter(
            job=job, topic=topic, document_id__in=[d for d, _ in model.unjudged]
        ).select_related("document", "nugget")
    }
    nuggets = list(inference_selectors.job_nuggets(job, topic.pk))
    embeddings.embeddings_request(nugget_ids=[n.pk for n in nuggets])
    nearest = embeddings.documents_nearest(document_ids=list(results), nuggets=nuggets)
    out = []
    for doc_id, p in model.unjudged:
        result = results[doc_id]
        text = result.document.text
        spans = [text[s:e] for s, e in (result.spans or [])[:3]]
        near = nearest.get(doc_id)
        if near:
            near = {**near, "text": text[slice(*near["span"])]}
        out.append({"result": result, "p": p, "spans": spans, "semantic": near})
    return out


def _suggested_rule_form(job: MatchJob, topic) -> tuple[RuleForm, str]:
    """The rule form filled with the best-F1 threshold of the topic's held-out judged
    documents (the global one when the topic has too few), and a note saying which."""
    try:
        fitted = rule_fitting.rule_fit(job=job, scope="per-topic")
    except DomainError as exc:
        return RuleForm(job=job), f"No threshold can be suggested: {exc}."
    threshold = fitted.per_topic.get(topic.qid, fitted.threshold)
    where = (
        "this topic's"
        if topic.qid in fitted.per_topic
        else "all topics' (too few judged relevant here)"
    )
    note = (
        f"Suggested threshold {threshold:.6g}: best F1 on {where} held-out judged "
        "documents (nugget sources scored without their own nuggets)."
    )
    return RuleForm({"kind": "threshold", "threshold": threshold}, job=job), note


@researcher_required
@require_GET
def job_document(request: HttpRequest, pk: int, qid: str, doc_pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    result = get_object_or_404(
        MatchResult.objects.select_related(
            "document", "topic", "nugget", "nugget__assessor", "nugget__bank"
        ),
        job=job,
        topic__qid=qid,
        document_id=doc_pk,
    )
    spans = result.spans or matching.result_spans(result)
    nuggets = list(inference_selectors.job_nuggets(job, result.topic_id))
    context = {
        "job": job,
        "result": result,
        "segments": text_segments(result.document.text, [(s, e) for s, e in spans]),
        "semantic_status": embeddings.semantic_status(),
        "semantic": embeddings.document_semantic_evidence(
            document=result.document, nuggets=nuggets
        ),
        "semantic_pending": embeddings.embeddings_request(
            document_ids=[result.document_id], nugget_ids=[n.pk for n in nuggets]
        ),
    }
    return render(request, "assessor_ui/jobs/document.html", context)


@researcher_required
@require_GET
def job_export(
    request: HttpRequest, pk: int, kind: str, part: str = "file"
) -> HttpResponse:
    """A download of the job page through the one export dispatcher: the file, or
    (``part="provenance"``) its sidecar. A refused rule is refused here too."""
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    if kind not in EXPORT_KINDS:
        raise Http404(f"No export named {kind!r}.")
    form = RuleForm(request.GET or None, job=job)
    try:
        if form.refused:
            raise exports.ExportError(_form_errors(form))
        export = export_kinds.export_make(
            export_kinds.ExportRequest(
                kind=kind,
                collection=job.collection,
                job=job,
                rule=form.rule(),
                topics=job.topics.all(),
                later=form.later_wanted(),
            )
        )
    except DomainError as exc:
        return error_page(
            request,
            status=409,
            title="Nothing to download",
            message=str(exc),
            back=reverse("job-detail", args=[job.pk]),
            back_label=f"Back to job {job.pk}",
        )
    name = export_kinds.export_filename(kind=kind, job=job)
    if part == "provenance":
        return _download(export.sidecar(), f"{name}.provenance.json")
    return _download(export.text(), name)


def _form_errors(form: RuleForm) -> str:
    """The form's refusals as sentences: "threshold: a probability ..."."""
    return " ".join(
        f"{field}: {' '.join(str(e) for e in errors)}"
        for field, errors in form.errors.items()
    )


def _download(text: str, filename: str) -> HttpResponse:
    kind = "application/json" if filename.endswith(".json") else "text/plain"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
