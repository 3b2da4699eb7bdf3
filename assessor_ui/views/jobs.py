"""Researcher pages: launch, list and watch matching jobs; inspect a topic's inferred
relevance; choose a decision rule; download exports. Staff and the researchers group
only: everybody else gets 403."""

from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.views.decorators import researcher_required
from nuggets_app.models import Collection, MatchJob, MatchResult, Pool, Sample, Topic
from nuggets_app.services import exports, inference, matching

EXPORT_KINDS = (
    "human",
    "inferred",
    "merged",
    "provenance",
    "scores",
    "prels",
    "passages",
)


class LaunchForm(forms.Form):
    collection = forms.ModelChoiceField(Collection.objects.all())
    source = forms.ChoiceField(choices=MatchJob.Source.choices)
    pool = forms.ModelChoiceField(Pool.objects.all(), required=False)
    sample = forms.ModelChoiceField(
        Sample.objects.select_related("pool"), required=False
    )
    topics = forms.CharField(
        required=False, help_text="qids separated by spaces; empty: all"
    )
    k = forms.IntegerField(min_value=1, max_value=10, initial=3)
    lam = forms.FloatField(min_value=1e-9, max_value=1.0, initial=0.5, label="Lambda")
    stem = forms.ChoiceField(choices=[("porter", "Porter"), ("none", "none")])
    stopwords = forms.ChoiceField(choices=[("default", "default"), ("none", "none")])
    grades = forms.CharField(required=False, help_text="nugget grades, e.g. 1 2")
    aspects = forms.CharField(required=False, help_text="nugget aspects, one per line")
    name = forms.CharField(required=False, max_length=200)

    def clean_grades(self) -> list[int]:
        text = self.cleaned_data["grades"]
        if not re.fullmatch(r"[\s\d-]*", text):
            raise forms.ValidationError("grades are integers separated by spaces")
        return [int(g) for g in text.split()]


class RuleForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[("threshold", "Score threshold"), ("top_n", "Top N per topic")],
        initial="threshold",
    )
    threshold = forms.FloatField(
        min_value=0.0, max_value=1.0, initial=0.5, required=False
    )
    n = forms.IntegerField(min_value=1, initial=100, required=False, label="N")

    def rule(self) -> inference.DecisionRule:
        data = self.cleaned_data if self.is_valid() else {}
        if data.get("kind") == "top_n":
            return inference.DecisionRule(kind="top_n", n=data.get("n") or 100)
        threshold = data.get("threshold")
        return inference.DecisionRule(threshold=0.5 if threshold is None else threshold)


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
        topics = Topic.objects.filter(collection=data["collection"])
        if data["topics"].split():
            topics = topics.filter(qid__in=data["topics"].split())
        try:
            job = matching.match_job_launch(
                collection=data["collection"], topics=list(topics), source=data["source"],
                pool=data["pool"], sample=data["sample"],
                nugget_filter={"grades": data["grades"],
                               "aspects": data["aspects"].splitlines()},
                k=data["k"], lam=data["lam"], stem=data["stem"],
                stopwords=data["stopwords"], created_by=request.user, name=data["name"],
            )  # fmt: skip
        except matching.MatchJobError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("job-detail", pk=job.pk)
    return render(request, "assessor_ui/jobs/launch.html", {"form": form})


@researcher_required
@require_GET
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    context = {
        "job": job,
        "progress": matching.match_job_progress(job),
        "topics": job.topics.order_by("qid"),
        "failed_chunks": job.chunks.filter(status="failed").select_related("topic")[
            :20
        ],
        "kinds": EXPORT_KINDS,
        "rule_form": RuleForm(request.GET or None),
    }
    return render(request, "assessor_ui/jobs/detail.html", context)


@researcher_required
@require_GET
def job_progress(request: HttpRequest, pk: int) -> JsonResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    return JsonResponse(matching.match_job_progress(job))


@researcher_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = matching.match_job_cancel(job=get_object_or_404(MatchJob, pk=pk))
    messages.info(request, f"Job {job.pk} is {job.get_status_display().lower()}.")
    return redirect("job-detail", pk=job.pk)


@researcher_required
@require_POST
def job_resume(request: HttpRequest, pk: int) -> HttpResponse:
    ids = matching.match_job_resume(job=get_object_or_404(MatchJob, pk=pk))
    messages.info(request, f"Re-queued {len(ids)} chunks.")
    return redirect("job-detail", pk=pk)


@researcher_required
@require_POST
def job_rescore(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    try:
        summary = matching.match_job_rescore(
            job=job, lam=float(request.POST.get("lam", ""))
        )
    except (ValueError, matching.MatchJobError) as exc:
        messages.error(request, f"Not re-scored: {exc}")
    else:
        messages.info(
            request, f"Re-scored {summary.results} results ({summary.changed} changed)."
        )
    return redirect("job-detail", pk=pk)


@researcher_required
@require_GET
def job_topic(request: HttpRequest, pk: int, topic_pk: int) -> HttpResponse:
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    topic = get_object_or_404(job.topics, pk=topic_pk)
    rule_form = RuleForm(request.GET or None)
    suggestion = ""
    if request.GET.get("suggest") == "f1":
        rule_form, suggestion = _suggested_rule_form(job, topic)
    rule = rule_form.rule()
    groups = inference.topic_scores(job, topic)
    histogram = inference.score_histograms(groups)
    curve = inference.tp_fp_curve(groups)
    estimates = inference.rule_estimate(job=job, rule=rule, topics=[topic])
    top = (
        MatchResult.objects.filter(job=job, topic=topic, score__gt=0)
        .select_related("document", "nugget")
        .order_by("-score", "document_id")[:25]
    )
    context = {
        "job": job,
        "topic": topic,
        "rule_form": rule_form,
        "rule": rule,
        "suggestion": suggestion,
        "estimate": estimates.get(topic.qid, inference.RuleEstimate()),
        "histogram": chart_histogram(histogram),
        "curve": chart_curve(curve),
        "groups": {name: len(pairs) for name, pairs in groups.items()},
        "top": top,
    }
    return render(request, "assessor_ui/jobs/topic.html", context)


def _suggested_rule_form(job: MatchJob, topic) -> tuple[RuleForm, str]:
    """The rule form filled with the best-F1 threshold of the topic's held-out judged
    documents (the global one when the topic has too few), and a note saying which."""
    try:
        fitted = inference.rule_fit(job=job, scope="per-topic")
    except ValueError as exc:
        return RuleForm(), f"No threshold can be suggested: {exc}."
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
    return RuleForm({"kind": "threshold", "threshold": threshold}), note


@researcher_required
@require_GET
def job_document(
    request: HttpRequest, pk: int, topic_pk: int, doc_pk: int
) -> HttpResponse:
    job = get_object_or_404(MatchJob, pk=pk)
    result = get_object_or_404(
        MatchResult.objects.select_related("document", "topic", "nugget"),
        job=job, topic_id=topic_pk, document_id=doc_pk,
    )  # fmt: skip
    spans = result.spans or matching.result_spans(result)
    context = {
        "job": job,
        "result": result,
        "segments": text_segments(result.document.text, spans),
    }
    return render(request, "assessor_ui/jobs/document.html", context)


@researcher_required
@require_GET
def job_export(request: HttpRequest, pk: int, kind: str) -> HttpResponse:
    job = get_object_or_404(MatchJob.objects.select_related("collection"), pk=pk)
    rule = RuleForm(request.GET or None).rule()
    try:
        if kind in ("human", "inferred", "merged", "provenance"):
            qrels_kind = "merged" if kind == "provenance" else kind
            export = exports.qrels_export(
                collection=job.collection, kind=qrels_kind, job=job, rule=rule,
                topics=job.topics.all(),
            )  # fmt: skip
            if kind == "provenance":
                return _download(
                    export.sidecar(), f"job-{job.pk}-merged.provenance.json"
                )
            return _download(export.text(), f"job-{job.pk}-{kind}.qrels")
        if kind == "scores":
            return _download(
                exports.scores_export(job=job).text(), f"job-{job.pk}.scores"
            )
        if kind == "prels":
            if job.sample is None:
                raise exports.ExportError("prels need a job over a sample")
            export = exports.prels_export(sample=job.sample)
            return _download(export.text(), f"job-{job.pk}.prels")
        if kind == "passages":
            export = exports.passages_export(
                collection=job.collection, topics=job.topics.all()
            )
            return _download(export.text(), f"job-{job.pk}.passages")
    except exports.ExportError as exc:
        return HttpResponse(
            f"{exc}\n", status=409, content_type="text/plain; charset=utf-8"
        )
    raise PermissionDenied("Unknown export.")


def _download(text: str, filename: str) -> HttpResponse:
    kind = "application/json" if filename.endswith(".json") else "text/plain"
    response = HttpResponse(text, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --- server-rendered charts (SVG geometry; the templates draw it) ---------------------
CHART_W, CHART_H, PAD = 480, 200, 30
SERIES = (("relevant", "Judged relevant"), ("nonrelevant", "Judged non-relevant"),
          ("unjudged", "Unjudged"))  # fmt: skip
# SVG presentation attributes, not inline CSS (the CSP allows no inline styles).
COLOURS = {"relevant": "#1f7a3d", "nonrelevant": "#b3261e", "unjudged": "#8a94a3"}


def chart_histogram(hist: dict) -> dict:
    """Grouped bars, one group per score bin, one bar per series."""
    counts = hist["counts"]
    bins = len(hist["edges"]) - 1
    top = max([1] + [c for row in counts.values() for c in row])
    group_w = (CHART_W - 2 * PAD) / bins
    bar_w = group_w / (len(SERIES) + 1)
    bars = []
    for b in range(bins):
        for i, (name, label) in enumerate(SERIES):
            count = counts[name][b]
            height = (CHART_H - 2 * PAD) * count / top
            bars.append({
                "x": round(PAD + b * group_w + (i + 0.5) * bar_w, 1),
                "y": round(CHART_H - PAD - height, 1), "w": round(bar_w, 1),
                "h": round(height, 1), "series": name, "fill": COLOURS[name],
                "title": f"{label}, {hist['edges'][b]:.1f}-{hist['edges'][b + 1]:.1f}: {count}",
            })  # fmt: skip
    rows = [
        {"low": hist["edges"][b], "high": hist["edges"][b + 1],
         "counts": [counts[name][b] for name, _ in SERIES]}
        for b in range(bins)
    ]  # fmt: skip
    legend = [(label, COLOURS[name]) for name, label in SERIES]
    return {"bars": bars, "rows": rows, "width": CHART_W, "height": CHART_H, "top": top,
            "series": SERIES, "legend": legend, "axis_y": CHART_H - PAD}  # fmt: skip


def chart_curve(curve: list[tuple[float, int, int]]) -> dict:
    """The relevant-found (y) against non-relevant-found (x) polyline from (0, 0)."""
    max_tp = max([1] + [tp for _, tp, _ in curve])
    max_fp = max([1] + [fp for _, _, fp in curve])
    inner_w, inner_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD
    points = [(0, 0)] + [(fp, tp) for _, tp, fp in curve]
    svg = " ".join(
        f"{PAD + inner_w * fp / max_fp:.1f},{CHART_H - PAD - inner_h * tp / max_tp:.1f}"
        for fp, tp in points
    )
    return {"points": svg, "rows": curve, "max_tp": max_tp, "max_fp": max_fp,
            "width": CHART_W, "height": CHART_H, "pad": PAD, "axis_y": CHART_H - PAD}  # fmt: skip


def text_segments(text: str, spans: list) -> list[tuple[str, bool]]:
    """The text cut at the (merged) spans: (piece, highlighted?) for ``<mark>``."""
    merged: list[list[int]] = []
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in spans):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        if start > pos:
            out.append((text[pos:start], False))
        out.append((text[start:end], True))
        pos = end
    if pos < len(text):
        out.append((text[pos:], False))
    return out
