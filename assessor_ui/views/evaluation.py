"""Researcher dashboard of a collection: evaluation of runs, qrels comparison, trust
diagnostics of inferred qrels, and verification queues.

Staff and the researchers group only (others get 403, anonymous users the login
page). Every page is plain server-rendered HTML; each table has a CSV download and
each chart, drawn inline as SVG, the same SVG as a download, computed from the same
query string as the page by the same builder, so the page and its downloads always
agree. The numbers come from ``services.dashboards``, computed once per input and kept
(``services.computed``); while a worker computes them the page shows its progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import urlencode

from csp.constants import NONE
from csp.decorators import csp
from django import forms
from django.contrib import messages
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from assessor_ui.forms.evaluation import (
    CompareForm,
    HistogramForm,
    RuleFields,
    RunsForm,
    TrustForm,
    VerificationForm,
)
from assessor_ui.templatetags.numbers import is_number
from assessor_ui.views.decorators import researcher_required
from nuggets_app.errors import DomainError
from nuggets_app.evaluation import selectors as selectors_eval
from nuggets_app.evaluation.services import (
    dashboards,
    diagnostics,
    figures,
    verification,
)
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.lib.charts import Chart
from nuggets_app.models import Collection, MatchJob, Run, Sample
from nuggets_app.operations.services import computed
from nuggets_app.pooling.services.assignments import AssignmentError


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


# --- page builders: the same data for a page, its CSV and its charts --------------------
@dataclass
class PageData:
    form: forms.Form
    context: dict = field(default_factory=dict)
    tables: dict[str, diagnostics.Table] = field(default_factory=dict)
    figures: dict[str, Chart] = field(default_factory=dict)
    error: str = ""
    # Results still being computed (``computed.Outcome``), shown as progress.
    computing: list[computed.Outcome] = field(default_factory=list)
    # Cache key of each kept result a table or figure comes from.
    keys: dict[str, str] = field(default_factory=dict)

    def use(self, outcome: computed.Outcome) -> None:
        """Take a kept result's tables, figures and values; or note its progress."""
        if outcome.status == "failed":
            raise computed.ComputationFailed(outcome.error)
        if not outcome.ready:
            self.computing.append(outcome)
            return
        result: dashboards.PageResult = outcome.value
        self.tables.update(result.tables)
        self.figures.update(result.figures)
        self.context.update(result.context)
        for name in (*result.tables, *result.figures):
            self.keys[name] = outcome.key

    def kept(self, what: str, name: str, compute: Callable[[], bytes | str]):
        """A download drawn from a kept result, itself kept beside it (a table or
        figure from no kept result is computed)."""
        key = self.keys.get(name)
        return computed.kept(f"{key}:{what}", compute) if key else compute()


def _runs_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data = page.form.cleaned_data
    sample = None
    if data["sample"]:
        sample = get_object_or_404(
            Sample, pk=data["sample"], pool__collection=collection
        ).pk
    expected = None
    if data["expected"]:
        expected = get_object_or_404(
            MatchJob, pk=data["expected"], collection=collection
        ).pk
    page.use(
        dashboards.runs_evaluation.get(
            collection_id=collection.pk,
            qrels=data["qrels"],
            rule=dashboards.rule_params(cast(RuleFields, page.form).rule()),
            measures=data["measures"],
            sample=sample,
            expected=expected,
        )
    )


def _compare_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data = page.form.cleaned_data
    page.use(
        dashboards.qrels_comparison.get(
            collection_id=collection.pk,
            qrels_a=data["qrels_a"],
            qrels_b=data["qrels_b"],
            rule=dashboards.rule_params(cast(RuleFields, page.form).rule()),
            measure=data["measure"],
        )
    )


def _trust_page(request: HttpRequest, collection: Collection, page: PageData) -> None:
    data = page.form.cleaned_data
    job = get_object_or_404(collection.match_jobs, pk=data["job"])
    page.context["job"] = job
    page.use(
        dashboards.trust_diagnostics.get(
            collection_id=collection.pk,
            job=job.pk,
            human=data["human"],
            rule=dashboards.rule_params(cast(RuleFields, page.form).rule()),
            bins=data["bins"],
            length_bins=data["length_bins"],
        )
    )
    extra = page.context["histogram_form"]
    if extra.is_valid() and extra.cleaned_data["run"]:
        run = get_object_or_404(
            Run, collection=collection, name=extra.cleaned_data["run"]
        )
        page.use(
            dashboards.run_histograms.get(
                collection_id=collection.pk,
                run=run.name,
                qrels=extra.cleaned_data["run_qrels"],
                bins=data["bins"],
            )
        )


def _verification_page(
    request: HttpRequest, collection: Collection, page: PageData
) -> None:
    samples = (
        Sample.objects.filter(
            pool__collection=collection, method=Sample.Method.VERIFICATION
        )
        .select_related("pool")
        .annotate(assessors=Count("assignments__assessor", distinct=True))
        .order_by("-pk")
    )
    page.context["samples"] = samples
    chosen = request.GET.get("sample", "")
    if chosen:
        sample = get_object_or_404(samples, pk=int(chosen) if chosen.isdigit() else 0)
        page.context["sample"] = sample
        page.use(
            dashboards.verification_agreement.get(
                collection_id=collection.pk, sample=sample.pk
            )
        )


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
    """The page's form bound to the query string, and, if valid, its tables/charts."""
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
        page.context["scorings"] = _scorings(collection, page.form)
        builder(request, collection, page)
    except DomainError as error:
        page.error = str(error)
        page.tables.clear()
        page.figures.clear()
        page.computing.clear()
    return collection, page


def _scorings(collection: Collection, form: forms.Form) -> list[str]:
    """Which scoring of each job the page's inferred or merged qrels come from (a
    re-scoring replaces the scores, so the page says which ones it used)."""
    if not form.is_bound or not form.is_valid():
        return []
    keys = [form.cleaned_data.get(n) or "" for n in ("qrels", "qrels_a", "qrels_b")]
    jobs = {}
    for key in keys:
        job = selectors_eval.source_job(collection, key)
        if job is not None:
            jobs[job.pk] = job
    if form.cleaned_data.get("job"):
        job = collection.match_jobs.filter(pk=form.cleaned_data["job"]).first()
        if job is not None:
            jobs[job.pk] = job
    return [job.scoring_text() for _, job in sorted(jobs.items())]


def _display(table: diagnostics.Table, csv_url: str) -> dict:
    """A table for the page: name, columns (``head``: each with ``num`` when the
    column holds numbers; the ``column_label`` filter names it in words), its rows (the
    ``number`` filter writes them), its CSV link."""
    first = table.rows[0] if table.rows else ()
    head = [
        {"name": name, "num": 0 < i < len(first) and is_number(first[i])}
        for i, name in enumerate(table.columns)
    ]
    return {
        "name": table.name,
        "columns": table.columns,
        "head": head,
        "rows": table.rows,
        "csv": csv_url,
    }


def _progress(data: PageData) -> dict | None:
    """Progress of the page's results still being computed (None when all are kept)."""
    if not data.computing:
        return None
    return {
        "status": "running",
        "done": sum(o.done for o in data.computing),
        "total": sum(o.total for o in data.computing),
    }


def _computing_response() -> HttpResponse:
    response = HttpResponse(
        "Still computing; try again in a few seconds.\n",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = "5"
    return response


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
    charts = {
        name: {"chart": chart, "svg": f"{base}plot/{name}.svg?{query}"}
        for name, chart in data.figures.items()
    }
    context = {
        "collection": collection,
        "page": page,
        "form": data.form,
        "tables": tables,
        "figures": charts,
        "query": query,
        "error": data.error,
        "computing": _progress(data),
        "progress_url": f"{base}progress?{query}",
        "aggregation": aggregation_of(collection),
        **data.context,
    }
    return render(request, PAGES[page][2], context)


@researcher_required
@require_GET
def evaluation_progress(request: HttpRequest, pk: int, page: str) -> JsonResponse:
    """Whether the page's results are kept yet (the page polls it while computing)."""
    _collection, data = _build(request, pk, page)
    if data.error:
        return JsonResponse({"status": "failed", "error": data.error})
    return JsonResponse(_progress(data) or {"status": "done"})


@researcher_required
@require_GET
def evaluation_csv(
    request: HttpRequest, pk: int, page: str, table: str
) -> HttpResponse:
    collection, data = _build(request, pk, page)
    if table not in data.tables:
        if data.computing:
            return _computing_response()
        return HttpResponse(
            data.error or "No such table.\n",
            status=404,
            content_type="text/plain; charset=utf-8",
        )
    text = data.kept(f"csv:{table}", table, data.tables[table].csv_text)
    response = HttpResponse(text, content_type="text/csv")
    filename = f"{collection.name}-{table}.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# A chart opened on its own is a document of its own: it draws with presentation
# attributes only (no script, no style, nothing fetched), so its policy allows nothing.
FIGURE_CSP = {
    "default-src": [NONE],
    "base-uri": [NONE],
    "form-action": [NONE],
    "frame-ancestors": [NONE],
}


@researcher_required
@require_GET
@csp(FIGURE_CSP)  # type: ignore[arg-type]  # django-csp's decorator types one argument
def evaluation_plot(
    request: HttpRequest, pk: int, page: str, plot: str
) -> HttpResponse:
    """A chart of the page as an SVG document: the same drawing the page shows."""
    _collection, data = _build(request, pk, page)
    if plot not in data.figures:
        if data.computing:
            return _computing_response()
        raise Http404("No such plot.")
    body = figures.chart_svg(data.figures[plot])
    response = HttpResponse(body, content_type="image/svg+xml")
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{plot}.svg"'
    return response


@researcher_required
def verification_create(request: HttpRequest, pk: int) -> HttpResponse:
    collection = get_object_or_404(Collection, pk=pk)
    form = VerificationForm(request.POST or None, collection)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = get_object_or_404(collection.match_jobs, pk=data["job"])
            sample = verification.verification_queue_create(
                job=job,
                rule=form.rule() or rule_default(job),
                relevant=data["relevant"],
                nonrelevant=data["nonrelevant"],
                seed=data["seed"],
                assessors=list(data["assessors"]),
                name=data["name"],
                overlap=data["overlap"],
                uncertain=data["uncertain"] or 0,
            )
        except (verification.VerificationError, AssignmentError) as error:
            form.add_error(None, str(error))
        else:
            if data["assessors"]:
                names = ", ".join(u.get_username() for u in data["assessors"])
                messages.info(
                    request,
                    f"Verification sample {sample.name} drawn and assigned to {names}.",
                )
            else:
                messages.info(
                    request,
                    f"Verification sample {sample.name} drawn, unassigned: nobody "
                    f"judges it until you run manage.py assign --sample {sample.name} "
                    "--all --assessors ...",
                )
            url = reverse("evaluation-page", args=[pk, "verification"])
            return redirect(f"{url}?sample={sample.pk}")
    context = {"collection": collection, "page": "verification", "form": form}
    return render(request, "assessor_ui/evaluation/verification_new.html", context)
