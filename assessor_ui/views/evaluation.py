"""Researcher dashboard of a collection: evaluation of runs, qrels comparison, trust
diagnostics of inferred qrels, and verification queues.

Staff and the researchers group only (others get 403, anonymous users the login
page). Every page is plain server-rendered HTML; each table has a CSV download and
each plot an SVG and a PNG download, computed from the same query string as the page
by the same builder, so the page and its downloads always agree.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from assessor_ui.views.decorators import researcher_required
from nuggets_app import plots, selectors_eval
from nuggets_app.ir.measures import DEFAULT_MEASURES, measures_parse
from nuggets_app.models import Collection, Run, Sample
from nuggets_app.services import diagnostics, verification
from nuggets_app.services.assignments import AssignmentError
from nuggets_app.services.inference import DecisionRule


# --- forms ------------------------------------------------------------------------------
class RuleFields(forms.Form):
    """The decision rule that turns match scores into inferred qrels."""

    kind = forms.ChoiceField(
        choices=[("threshold", "Score threshold"), ("top_n", "Top N per topic")],
        initial="threshold", label="Rule",
    )  # fmt: skip
    threshold = forms.FloatField(min_value=0.0, max_value=1.0, initial=0.5)
    n = forms.IntegerField(min_value=1, initial=100, label="N")

    def rule(self) -> DecisionRule:
        data = self.cleaned_data
        if data["kind"] == "top_n":
            return DecisionRule(kind="top_n", n=data["n"])
        return DecisionRule(threshold=data["threshold"])


class RunsForm(RuleFields):
    qrels = forms.ChoiceField(label="Qrels")
    measures = forms.CharField(initial=" ".join(DEFAULT_MEASURES))
    sample = forms.ChoiceField(required=False, label="statAP sample")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        self.fields["qrels"].choices = selectors_eval.qrels_choices(collection)
        self.fields["sample"].choices = [("", "none")] + [
            (str(s.pk), f"{s.pool.name} / {s.name} ({s.method})")
            for s in selectors_eval.statap_samples(collection)
        ]

    def clean_measures(self) -> list[str]:
        names = self.cleaned_data["measures"].split()
        try:
            return [str(m) for m in measures_parse(names)]
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


class CompareForm(RuleFields):
    qrels_a = forms.ChoiceField(label="Qrels A (reference)")
    qrels_b = forms.ChoiceField(label="Qrels B")
    measure = forms.CharField(initial="AP")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        choices = selectors_eval.qrels_choices(collection)
        self.fields["qrels_a"].choices = self.fields["qrels_b"].choices = choices

    def clean_measure(self) -> str:
        try:
            return str(measures_parse([self.cleaned_data["measure"]])[0])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


class TrustForm(RuleFields):
    job = forms.ChoiceField(label="Matching job")
    human = forms.ChoiceField(label="Human qrels")
    bins = forms.IntegerField(min_value=1, max_value=100, initial=10)
    length_bins = forms.IntegerField(min_value=1, max_value=100, initial=10)

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        jobs = selectors_eval.done_jobs(collection)
        self.fields["job"].choices = [(str(j.pk), f"{j.pk} {j.name}") for j in jobs]
        self.fields["human"].choices = [
            c for c in selectors_eval.qrels_choices(collection)
            if c[0].split(":")[0] in ("human", "qrels")
        ]  # fmt: skip


class HistogramForm(forms.Form):
    """Histogram analysis of any run's scores against a qrels source."""

    run = forms.ChoiceField(required=False, label="Run scores")
    run_qrels = forms.ChoiceField(required=False, label="against qrels")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        runs = Run.objects.filter(collection=collection).order_by("name")
        self.fields["run"].choices = [("", "none")] + [(r.name, r.name) for r in runs]
        self.fields["run_qrels"].choices = selectors_eval.qrels_choices(collection)


class VerificationForm(RuleFields):
    job = forms.ChoiceField(label="Matching job")
    relevant = forms.IntegerField(min_value=0, initial=10, label="Inferred relevant")
    nonrelevant = forms.IntegerField(min_value=0, initial=5, label="Inferred non-rel.")
    seed = forms.IntegerField(initial=1)
    name = forms.SlugField(required=False, max_length=200)
    assessors = forms.ModelMultipleChoiceField(
        get_user_model().objects.order_by("username"), required=False
    )
    overlap = forms.IntegerField(min_value=1, initial=1)

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        jobs = selectors_eval.done_jobs(collection)
        self.fields["job"].choices = [(str(j.pk), f"{j.pk} {j.name}") for j in jobs]


def _bound(form_class, request: HttpRequest, collection: Collection):
    """A form bound to the query string, fields it lacks taking their initial values
    (so a first visit computes with the defaults)."""
    probe = form_class(None, collection)
    data = {}
    for name, f in probe.fields.items():
        initial = f.initial
        if initial is None and getattr(f, "choices", None):
            initial = next((k for k, _ in f.choices if k), "")
        data[name] = "" if initial is None else initial
    for name in request.GET:
        if name in probe.fields:
            data[name] = request.GET[name]
    return form_class(data, collection)


# --- page builders: the same data for a page, its CSV and its plots ---------------------
@dataclass
class PageData:
    form: forms.Form
    context: dict = field(default_factory=dict)
    tables: dict[str, diagnostics.Table] = field(default_factory=dict)
    figures: dict[str, Callable[[str], bytes]] = field(default_factory=dict)
    error: str = ""


def _runs_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data, rule = page.form.cleaned_data, page.form.rule()
    qrels = selectors_eval.qrels_resolve(
        collection=collection, key=data["qrels"], rule=rule
    )
    runs = selectors_eval.collection_runs(collection)
    results = diagnostics.runs_evaluate(
        runs=runs, qrels=qrels, measures=data["measures"]
    )
    means, topics = diagnostics.evaluation_tables(results)
    page.tables.update(evaluation=means, evaluation_topics=topics)
    if data["sample"]:
        sample = get_object_or_404(
            Sample, pk=data["sample"], pool__collection=collection
        )
        statap = diagnostics.runs_statap(
            runs=runs, prels=selectors_eval.sample_prels(sample)
        )
        page.tables.update(
            statap=diagnostics.statap_table(statap),
            statap_topics=diagnostics.statap_topics_table(statap),
        )


def _compare_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data, rule = page.form.cleaned_data, page.form.rule()
    comparison = diagnostics.qrels_compare(
        runs=selectors_eval.collection_runs(collection),
        qrels_a=selectors_eval.qrels_resolve(
            collection=collection, key=data["qrels_a"], rule=rule
        ),
        qrels_b=selectors_eval.qrels_resolve(
            collection=collection, key=data["qrels_b"], rule=rule
        ),
        measure=data["measure"],
    )
    summary, moves = comparison.tables()
    page.tables.update(comparison_summary=summary, comparison=moves)
    page.figures["scatter"] = functools.partial(plots.comparison_figure, comparison)
    page.context["ranking"] = comparison.ranking


def _trust_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data = page.form.cleaned_data
    job = get_object_or_404(collection.match_jobs, pk=data["job"])
    report = diagnostics.trust_report(
        collection=collection, job=job, rule=page.form.rule(), human_key=data["human"],
        bins=data["bins"], length_bins=data["length_bins"],
    )  # fmt: skip
    page.tables.update({t.name: t for t in report.tables()})
    page.figures.update(
        matcher_map=functools.partial(plots.matcher_map_figure, report.matcher),
        histograms=functools.partial(plots.histogram_figure, report.histograms, None),
        length_bias=functools.partial(plots.length_bias_figure, report.lengths),
    )
    page.context.update(report=report, job=job)
    extra = page.context["histogram_form"]
    if extra.is_valid() and extra.cleaned_data["run"]:
        _run_histograms(page, collection, extra.cleaned_data, data["bins"])


def _run_histograms(page: PageData, collection: Collection, data: dict, bins: int):
    """DO/HSA of a stored run's scores against a qrels source (all judged docs)."""
    run = get_object_or_404(Run, collection=collection, name=data["run"])
    qrels = selectors_eval.qrels_resolve(collection=collection, key=data["run_qrels"])
    labels = diagnostics.binary_labels(qrels, level=collection.relevant_threshold)
    analysis = diagnostics.histogram_analysis(
        scores=selectors_eval.run_scores(run), labels=labels, bins=bins
    )
    summary, counts = analysis.tables()
    page.tables["run_do_hsa"] = diagnostics.Table(
        "run_do_hsa", summary.columns, summary.rows
    )
    page.tables["run_histograms"] = diagnostics.Table(
        "run_histograms", counts.columns, counts.rows
    )
    page.figures["run_histograms"] = functools.partial(
        plots.histogram_figure, analysis, None
    )


def _verification_page(
    request: HttpRequest, collection: Collection, page: PageData
) -> None:
    samples = Sample.objects.filter(
        pool__collection=collection, method=Sample.Method.VERIFICATION
    ).select_related("pool").order_by("-pk")  # fmt: skip
    page.context["samples"] = samples
    chosen = request.GET.get("sample", "")
    if chosen:
        sample = get_object_or_404(samples, pk=int(chosen) if chosen.isdigit() else 0)
        report = verification.verification_report(sample=sample)
        page.tables["verification"] = report.table()
        page.figures["agreement"] = report.figure
        page.context.update(report=report, sample=sample)


Builder = Callable[[HttpRequest, Collection, PageData], None]
PAGES: dict[str, tuple[type[forms.Form] | None, Builder, str]] = {
    "runs": (RunsForm, _runs_page, "assessor_ui/evaluation/runs.html"),
    "compare": (CompareForm, _compare_page, "assessor_ui/evaluation/compare.html"),
    "trust": (TrustForm, _trust_page, "assessor_ui/evaluation/trust.html"),
    "verification": (
        None,
        _verification_page,
        "assessor_ui/evaluation/verification.html",
    ),
}


def _build(request: HttpRequest, pk: int, name: str) -> tuple[Collection, PageData]:
    """The page's form bound to the query string, and, if valid, its tables/plots."""
    if name not in PAGES:
        raise Http404("No such page.")
    collection = get_object_or_404(Collection, pk=pk)
    form_class, builder, _ = PAGES[name]
    if form_class is None:
        page = PageData(VerificationForm(None, collection))
    else:
        page = PageData(_bound(form_class, request, collection))
        if name == "trust":
            page.context["histogram_form"] = HistogramForm(
                request.GET or None, collection
            )
        if not page.form.is_valid():
            return collection, page
    try:
        builder(request, collection, page)
    except ValueError as error:  # SourceError, VerificationError, bad ir input
        page.error = str(error)
        page.tables.clear()
        page.figures.clear()
    return collection, page


def _display(table: diagnostics.Table, csv_url: str) -> dict:
    """A table's cells as text for the page (4 decimals; n/a for NaN)."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return "n/a" if math.isnan(value) else f"{value:.4f}"
        return str(value)

    rows = [[cell(v) for v in row] for row in table.rows]
    return {"name": table.name, "columns": table.columns, "rows": rows, "csv": csv_url}


# --- views --------------------------------------------------------------------------------
@researcher_required
@require_GET
def evaluation_index(request: HttpRequest) -> HttpResponse:
    collections = Collection.objects.order_by("name")
    return render(
        request, "assessor_ui/evaluation/index.html", {"collections": collections}
    )


@researcher_required
@require_GET
def evaluation_page(request: HttpRequest, pk: int, page: str) -> HttpResponse:
    collection, data = _build(request, pk, page)
    query = request.GET.urlencode() or urlencode(data.form.data, doseq=True)
    base = reverse("evaluation-page", args=[pk, page])
    tables = {
        name: _display(t, f"{base}csv/{name}?{query}")
        for name, t in data.tables.items()
    }
    figures = {name: f"{base}plot/{name}" for name in data.figures}
    context = {"collection": collection, "page": page, "form": data.form,
               "tables": tables, "figures": figures, "query": query,
               "error": data.error, **data.context}  # fmt: skip
    return render(request, PAGES[page][2], context)


@researcher_required
@require_GET
def evaluation_csv(
    request: HttpRequest, pk: int, page: str, table: str
) -> HttpResponse:
    collection, data = _build(request, pk, page)
    if table not in data.tables:
        return HttpResponse(data.error or "No such table.\n", status=404,
                            content_type="text/plain; charset=utf-8")  # fmt: skip
    response = HttpResponse(data.tables[table].csv_text(), content_type="text/csv")
    filename = f"{collection.name}-{table}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@researcher_required
@require_GET
def evaluation_plot(
    request: HttpRequest, pk: int, page: str, plot: str, fmt: str
) -> HttpResponse:
    if fmt not in plots.FORMATS:
        raise Http404("No such format.")
    _collection, data = _build(request, pk, page)
    if plot not in data.figures:
        raise Http404("No such plot.")
    response = HttpResponse(data.figures[plot](fmt), content_type=plots.FORMATS[fmt])
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{plot}.{fmt}"'
    return response


@researcher_required
def verification_create(request: HttpRequest, pk: int) -> HttpResponse:
    collection = get_object_or_404(Collection, pk=pk)
    form = VerificationForm(request.POST or None, collection)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            sample = verification.verification_queue_create(
                job=get_object_or_404(collection.match_jobs, pk=data["job"]),
                rule=form.rule(), relevant=data["relevant"],
                nonrelevant=data["nonrelevant"], seed=data["seed"],
                assessors=list(data["assessors"]), name=data["name"],
                overlap=data["overlap"],
            )  # fmt: skip
        except (verification.VerificationError, AssignmentError) as error:
            form.add_error(None, str(error))
        else:
            messages.info(request, f"Verification sample {sample.name} drawn.")
            url = reverse("evaluation-page", args=[pk, "verification"])
            return redirect(f"{url}?sample={sample.pk}")
    context = {"collection": collection, "page": "verification", "form": form}
    return render(request, "assessor_ui/evaluation/verification_new.html", context)
