"""Staff pages of a collection: the collections list, a collection's overview, pools,
samples and assignments. Long work (pools, samples) runs as a task with a progress
page; assigning is immediate. Staff only: everybody else gets 403."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from assessor_ui.forms.quality import AggregationForm
from assessor_ui.forms.staff import (
    AssignForm,
    CollectionForm,
    ExtendForm,
    PoolForm,
    ReassignForm,
    RelevanceLevelForm,
    SampleForm,
)
from assessor_ui.views.decorators import staff_required
from nuggets_app.collection.services.relevance import relevance_level_set
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.rounds import rounds_overview
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.models import (
    Assignment,
    Collection,
    MatchJob,
    Pool,
    Qrels,
    Sample,
    TaskRecord,
    Topic,
)
from nuggets_app.operations.services.task_records import tasks_listed
from nuggets_app.pooling.services.assignments import (
    AssignmentError,
    assignment_create,
    assignment_reassign,
    sample_nuggets_share,
)
from nuggets_app.pooling.services.samples import SampleError
from nuggets_app.staff import selectors as selectors_staff
from nuggets_app.staff import services as staff_tasks


@staff_required
def collection_list(request: HttpRequest) -> HttpResponse:
    form = CollectionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        collection = form.save()
        return redirect("staff-collection", name=collection.name)
    context = {"rows": selectors_staff.collection_list(), "form": form}
    return render(request, "assessor_ui/staff/collections.html", context)


@staff_required
def collection_detail(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    level_form = RelevanceLevelForm(request.POST or None, collection=collection)
    if request.method == "POST" and level_form.is_valid():
        relevance_level_set(
            collection=collection, level=level_form.cleaned_data["level"]
        )
        messages.success(
            request,
            f"Relevant at grade >= {collection.relevance_level} for jobs launched "
            "from now on (finished jobs keep their own level).",
        )
        return redirect("staff-collection", name=collection.name)
    aggregation = aggregation_of(collection)
    context = {
        "collection": collection,
        "level_form": level_form,
        "counts": selectors_staff.collection_counts(collection),
        "topics": sorted(
            Topic.objects.filter(collection=collection).only("qid"),
            key=lambda t: qid_key(t.qid),
        )[:50],
        "runs": collection.runs.all(),
        "qrels": Qrels.objects.filter(collection=collection),
        "pools": Pool.objects.filter(collection=collection).prefetch_related("samples"),
        "jobs": MatchJob.objects.filter(collection=collection)[:20],
        "tasks": tasks_listed(
            TaskRecord.objects.filter(collection=collection).select_related(
                "started_by"
            )[:20]
        ),
        "aggregation": aggregation,
        "aggregation_form": AggregationForm(
            initial={k: v for k, v in aggregation.as_dict().items() if k != "text"}
        ),
    }
    return render(request, "assessor_ui/staff/collection.html", context)


@staff_required
def pool_new(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    form = PoolForm(request.POST or None, collection=collection)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        task = staff_tasks.pool_task_start(
            collection=collection,
            runs=None if data["all_runs"] else list(data["runs"]),
            depth=data["depth"],
            name=data["name"],
            user=request.user,
            topics=data["topics"],
        )
        return redirect("staff-task", pk=task.pk)
    return render(
        request,
        "assessor_ui/staff/pool_new.html",
        {"collection": collection, "form": form},
    )


@staff_required
def pool_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Per-topic pool and sample sizes; draw a sample (Preview shows the sizes first)."""
    pool = get_object_or_404(Pool.objects.select_related("collection"), pk=pk)
    samples = list(pool.samples.all())
    form = SampleForm(request.POST or None, collection=pool.collection)
    preview = None
    rows = selectors_staff.pool_topic_sizes(pool, samples)
    largest = max((row.pool for row in rows), default=0)
    whole_pool = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        number, percent = data["size"]
        try:
            size = staff_tasks.sample_size_for(pool=pool, size=number, percent=percent)
            if size < data["rounds"]:
                raise SampleError(
                    f"{size} per topic cannot fill {data['rounds']} rounds"
                )
        except SampleError as exc:
            form.add_error("size", str(exc))
        else:
            if size >= largest > 0:
                whole_pool = (
                    f"{size} per topic is at least the largest topic pool "
                    f"({largest} documents): the sample holds the whole pool."
                )
            if "preview" in request.POST:
                preview = size
            else:
                if whole_pool:
                    messages.warning(request, whole_pool)
                task = staff_tasks.sample_task_start(
                    pool=pool,
                    size=size,
                    method=data["method"],
                    seed=data["seed"],
                    name=data["name"],
                    user=request.user,
                    per_run_quota=data["per_run_quota"],
                    rounds=data["rounds"],
                    judge=data.get("judge"),
                    judge_weight=data.get("judge_weight"),
                )
                return redirect("staff-task", pk=task.pk)
    context = {
        "pool": pool,
        "collection": pool.collection,
        "samples": samples,
        "rows": [
            (row, min(preview, row.pool) if preview is not None else None)
            for row in rows
        ],
        "form": form,
        "preview": preview,
        "whole_pool": whole_pool,
        "runs": pool.runs.all(),
    }
    return render(request, "assessor_ui/staff/pool.html", context)


def _sample_page(
    request, sample, *, extend=None, assign=None, reassign=None, status=200
):
    context = {
        "sample": sample,
        "pool": sample.pool,
        "collection": sample.pool.collection,
        "progress": selectors_staff.sample_assessor_progress(sample),
        "extend_form": extend or ExtendForm(),
        "assign_form": assign or AssignForm(),
        "reassign_form": reassign or ReassignForm(),
        "rounds": rounds_overview(sample),
        "topics": len(sample.draws),
        "documents": sum(r["distinct"] for r in sample.draws.values()),
    }
    return render(request, "assessor_ui/staff/sample.html", context, status=status)


def _sample(pk: int) -> Sample:
    return get_object_or_404(
        Sample.objects.select_related("pool", "pool__collection"), pk=pk
    )


@staff_required
def sample_detail(request: HttpRequest, pk: int) -> HttpResponse:
    return _sample_page(request, _sample(pk))


@staff_required
@require_POST
def sample_extend_view(request: HttpRequest, pk: int) -> HttpResponse:
    sample = _sample(pk)
    form = ExtendForm(request.POST)
    if not form.is_valid():
        return _sample_page(request, sample, extend=form, status=400)
    task = staff_tasks.extend_task_start(
        sample=sample, extra=form.cleaned_data["extra"], user=request.user
    )
    return redirect("staff-task", pk=task.pk)


def _topics(sample: Sample, text: str) -> list[Topic] | None:
    qids = text.split()
    if not qids:
        return None
    topics = list(Topic.objects.filter(collection=sample.pool.collection, qid__in=qids))
    missing = sorted(set(qids) - {t.qid for t in topics})
    if missing:
        raise AssignmentError(f"unknown topics: {', '.join(missing)}")
    return topics


@staff_required
@require_POST
def sample_assign(request: HttpRequest, pk: int) -> HttpResponse:
    sample = _sample(pk)
    form = AssignForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = assignment_create(
                sample=sample,
                assessors=list(data["assessors"]),
                topics=_topics(sample, data["topics"]),
                overlap=data["overlap"],
            )
        except AssignmentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"{len(made)} assignments in place.")
            return redirect("staff-sample", pk=sample.pk)
    return _sample_page(request, sample, assign=form, status=400)


@staff_required
@require_POST
def sample_nuggets_shared(request: HttpRequest, pk: int) -> HttpResponse:
    """Turn the sharing of nuggets between the sample's assessors on or off."""
    sample = _sample(pk)
    shared = request.POST.get("shared") == "1"
    sample_nuggets_share(sample=sample, shared=shared)
    messages.success(
        request,
        "Assessors of this sample now see each other's nuggets."
        if shared
        else "Assessors of this sample now see only their own nuggets.",
    )
    return redirect("staff-sample", pk=sample.pk)


@staff_required
@require_POST
def sample_reassign(request: HttpRequest, pk: int) -> HttpResponse:
    sample = _sample(pk)
    form = ReassignForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        progress = {
            p.assignment.pk: p
            for row in selectors_staff.sample_assessor_progress(sample)
            for p in row.assignments
        }
        wanted = data["topics"].split()
        chosen = [
            a
            for a in Assignment.objects.filter(
                sample=sample, assessor=data["source"]
            ).select_related("topic", "assessor")
            if progress[a.pk].to_judge > 0 and (not wanted or a.topic.qid in wanted)
        ]
        try:
            if not chosen:
                raise AssignmentError(f"{data['source']} has no unfinished topic here")
            moved = assignment_reassign(assignments=chosen, assessor=data["target"])
        except AssignmentError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(
                request, f"{len(moved)} unfinished topics now go to {data['target']}."
            )
            return redirect("staff-sample", pk=sample.pk)
    return _sample_page(request, sample, reassign=form, status=400)


@staff_required
@require_POST
def sample_round_next(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask for the next round (drawn once the latest round is judged)."""
    sample = _sample(pk)
    staff_tasks.round_next_request(sample=sample)
    messages.success(request, "The next round is drawn as soon as this one is judged.")
    return redirect("staff-sample", pk=sample.pk)
