"""Staff pages that keep several assessors' work in hand: the collection's aggregation
rule, its guidelines, known answers and each assessor's agreement, and the workload."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.assessor import first_error
from assessor_ui.forms.quality import (
    AggregationForm,
    GuidelinesForm,
    InterleaveForm,
    KnownAnswersForm,
    QualityLevelForm,
)
from assessor_ui.views.decorators import staff_required
from nuggets_app.ir.aggregation import AggregationError
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.judging.selectors.quality import assessor_quality
from nuggets_app.judging.services.aggregation import aggregation_set
from nuggets_app.judging.services.guidelines import (
    GuidelinesError,
    guidelines_render,
    guidelines_save,
)
from nuggets_app.judging.services.known_answers import (
    KnownAnswerError,
    known_answers_add,
    known_answers_interleave,
)
from nuggets_app.models import Collection, Guidelines, KnownAnswer, Sample
from nuggets_app.pooling.selectors import workload


@staff_required
@require_POST
def aggregation_update(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    form = AggregationForm(request.POST)
    if form.is_valid():
        try:
            aggregation_set(
                collection=collection, aggregation=form.cleaned_data["aggregation"]
            )
        except AggregationError as exc:
            messages.error(request, f"Not changed: {exc}.")
        else:
            messages.success(
                request,
                f"Human labels are now {aggregation_of(collection).describe()}; jobs "
                "fitted before keep the labels they were fitted on until refitted.",
            )
    else:
        messages.error(request, f"Not changed: {first_error(form)[1]}")
    return redirect("staff-collection", name=collection.name)


@staff_required
def guidelines(request: HttpRequest, name: str) -> HttpResponse:
    """The guidelines in force, rendered, with the form for a new version and the
    earlier versions."""
    collection = get_object_or_404(Collection, name=name)
    versions = list(
        Guidelines.objects.filter(collection=collection).select_related("author")
    )
    current = versions[0] if versions else None
    form = GuidelinesForm(
        request.POST or None, initial={"text": current.text if current else ""}
    )
    if request.method == "POST" and form.is_valid():
        try:
            saved = guidelines_save(
                collection=collection,
                text=form.cleaned_data["text"],
                author=request.user,
            )
        except GuidelinesError as exc:
            form.add_error("text", str(exc))
        else:
            messages.success(request, f"Guidelines version {saved.version} in force.")
            return redirect("staff-guidelines", name=collection.name)
    context = {
        "collection": collection,
        "form": form,
        "current": current,
        "rendered": guidelines_render(current.text) if current else "",
        "versions": versions,
    }
    return render(request, "assessor_ui/quality/guidelines.html", context)


@staff_required
@require_GET
def assessor_quality_page(request: HttpRequest, name: str) -> HttpResponse:
    """Each assessor's agreement with the known answers, the adjudicated decisions
    and the others, with intervals; the known answers and where they are used."""
    collection = get_object_or_404(Collection, name=name)
    level_form = QualityLevelForm(request.GET or None)
    level = 0.8
    if level_form.is_valid() and level_form.cleaned_data["level"] is not None:
        level = level_form.cleaned_data["level"]
    samples = Sample.objects.filter(pool__collection=collection).select_related("pool")
    rows = assessor_quality(collection=collection, level=level)
    context = {
        "collection": collection,
        "rows": rows,
        # The flag's note only where it applies: someone flagged, or checks judged.
        "flagged": any(r.flag for r in rows),
        "checked": any(r.known.n for r in rows),
        "level": level,
        "level_form": level_form,
        "known_count": KnownAnswer.objects.filter(topic__collection=collection).count(),
        "known_form": KnownAnswersForm(collection=collection),
        "samples": [(s, InterleaveForm(initial={"sample": s.pk})) for s in samples],
    }
    return render(request, "assessor_ui/quality/assessors.html", context)


@staff_required
@require_POST
def known_answers_create(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    form = KnownAnswersForm(request.POST, collection=collection)
    if not form.is_valid():
        messages.error(request, f"No known answers added: {first_error(form)[1]}")
        return redirect("staff-assessor-quality", name=collection.name)
    data = form.cleaned_data
    try:
        added = known_answers_add(
            collection=collection,
            source=data["source"],
            qrels=data["qrels"],
            per_topic=data["per_topic"],
            seed=data["seed"],
            created_by=request.user,
        )
    except KnownAnswerError as exc:
        messages.error(request, f"No known answers added: {exc}.")
    else:
        messages.success(request, f"{added} known answers added.")
    return redirect("staff-assessor-quality", name=collection.name)


@staff_required
@require_POST
def known_answers_place(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    form = InterleaveForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing interleaved: {first_error(form)[1]}")
        return redirect("staff-assessor-quality", name=collection.name)
    sample = get_object_or_404(
        Sample, pk=form.cleaned_data["sample"], pool__collection=collection
    )
    try:
        done = known_answers_interleave(
            sample=sample,
            rate=form.cleaned_data["rate"],
            seed=form.cleaned_data["seed"],
        )
    except KnownAnswerError as exc:
        messages.error(request, f"Nothing interleaved: {exc}.")
        return redirect("staff-assessor-quality", name=collection.name)
    added = sum(done.added.values())
    skipped = "; ".join(f"topic {q}: {why}" for q, why in done.skipped.items())
    messages.success(
        request,
        f"{added} known answers interleaved in {len(done.added)} topics of sample "
        f"{sample.name}" + (f" (skipped {skipped})" if skipped else "") + ".",
    )
    return redirect("staff-assessor-quality", name=collection.name)


@staff_required
@require_GET
def workload_page(request: HttpRequest) -> HttpResponse:
    """Per sample and assessor: assigned, judged, remaining, time, rate, estimate."""
    return render(request, "assessor_ui/quality/workload.html", {"loads": workload()})
