"""The long tasks staff start from the browser: uploads (check, then import), pools,
samples and sample extensions. Each is a :class:`TaskRecord` run by the Celery task
``nuggets_app.staff.tasks.staff_task`` (in-process when there is no ``REDIS_URL``) through the
same services the management commands call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from nuggets_app.collection.services import uploads
from nuggets_app.errors import DomainError
from nuggets_app.models import (
    Collection,
    Judge,
    Pool,
    PoolDocument,
    Run,
    Sample,
    TaskRecord,
)
from nuggets_app.operations import queue
from nuggets_app.operations.services.task_records import (
    ProgressReporter,
    confirm_window,
    task_record_create,
    task_record_execute,
)
from nuggets_app.pooling.services.pools import PoolError, pool_build, pool_summary
from nuggets_app.pooling.services.rounds import sample_rounds_draw
from nuggets_app.pooling.services.samples import SampleError, sample_draw, sample_extend

Status = TaskRecord.Status
Kind = TaskRecord.Kind


class TaskStateError(DomainError):
    """The task is not in a state that allows this."""


def _enqueue(task: TaskRecord, phase: str) -> None:
    pk = task.pk
    transaction.on_commit(lambda: queue.task_enqueue(queue.STAFF_TASK, pk, phase))


def upload_task_start(
    *,
    kind: str,
    collection: Collection,
    user: Any,
    files: Iterable[Any],
    params: dict | None = None,
) -> TaskRecord:
    """Store the uploaded files and queue their check (nothing is imported yet).

    Raises :class:`uploads.UploadError` (and keeps nothing) for a refused upload.
    """
    if kind not in uploads.UPLOAD_KINDS:
        raise ValueError(f"not an upload kind: {kind!r}")
    files = list(files)
    names = ", ".join(uploads.safe_name(f.name) for f in files)
    task = task_record_create(
        kind=kind,
        user=user,
        label=f"{TaskRecord.Kind(kind).label}: {names} into {collection.name}",
        collection=collection,
        params=params,
        status=Status.CHECKING,
    )
    try:
        uploads.upload_store(task=task, files=files)
    except BaseException:
        uploads.upload_discard(task=task)
        task.delete()
        raise
    _enqueue(task, "check")
    return task


def uploads_expire() -> int:
    """Cancel the checked uploads whose confirmation window has passed
    (``UPLOAD_CONFIRM_HOURS`` after their check) and remove their files; how many."""
    cutoff = timezone.now() - confirm_window()
    hours = settings.UPLOAD_CONFIRM_HOURS
    expired = 0
    for task in TaskRecord.objects.filter(
        status=Status.CHECKED, finished_at__lt=cutoff
    ):
        expired += TaskRecord.objects.filter(pk=task.pk, status=Status.CHECKED).update(
            status=Status.CANCELLED,
            error=f"expired: not confirmed within {hours} hours of its check; "
            "upload the files again to import them",
        )
        uploads.upload_discard(task=task)
    return expired


def upload_task_confirm(*, task: TaskRecord) -> TaskRecord:
    """Queue the import of a checked upload; refused unless the check found no problem
    and the confirmation window is still open."""
    if task.kind not in uploads.UPLOAD_KINDS:
        raise TaskStateError("only uploads are confirmed")
    uploads_expire()
    with transaction.atomic():
        changed = TaskRecord.objects.filter(
            pk=task.pk, status=Status.CHECKED, problems=[], cancel_requested=False
        ).update(status=Status.QUEUED)
        if not changed:
            raise TaskStateError(
                "only a checked upload without problems can be imported"
            )
        task.refresh_from_db()
        _enqueue(task, "import")
    return task


def pool_task_start(
    *,
    collection: Collection,
    runs: Sequence[Run] | None,
    depth: int,
    name: str,
    user: Any,
    topics: Sequence[str] | None = None,
) -> TaskRecord:
    """Queue ``pool_build`` of ``runs`` (None: every run of the collection) over
    ``topics`` (qids; None: every topic the runs answer)."""
    params = {
        "runs": "all" if runs is None else [run.pk for run in runs],
        "depth": depth,
        "name": name,
        "topics": None if topics is None else list(topics),
    }
    which = "all runs" if runs is None else f"{len(runs)} runs"
    over = "" if topics is None else f", {len(topics)} topics"
    task = task_record_create(
        kind=Kind.POOL,
        user=user,
        label=f"Pool {name} of {collection.name}: {which}, depth {depth}{over}",
        collection=collection,
        params=params,
    )
    _enqueue(task, "run")
    return task


def sample_size_for(*, pool: Pool, size: int | None, percent: float | None) -> int:
    """Documents per topic: ``size``, or ``percent`` of the mean pool size per topic
    (as the simulate command's sample size ``P%``), at least 1."""
    if size is not None:
        return size
    if percent is None or not 0 < percent <= 100:
        raise SampleError("give a size, or a percentage between 0 and 100")
    sizes = list(
        PoolDocument.objects.filter(pool=pool)
        .values("topic_id")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    if not sizes:
        raise SampleError(f"pool {pool.name} is empty; build it first")
    return max(1, round(sum(sizes) / len(sizes) * percent / 100))


def pool_largest_topic(*, pool: Pool) -> int:
    """The number of documents in the pool's largest topic (0 for an empty pool)."""
    sizes = (
        PoolDocument.objects.filter(pool=pool)
        .values("topic_id")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    return max(sizes, default=0)


def sample_task_start(
    *,
    pool: Pool,
    size: int,
    method: str,
    seed: int,
    name: str,
    user: Any,
    per_run_quota: bool = False,
    rounds: int = 1,
    judge: Judge | None = None,
    judge_weight: float | None = None,
) -> TaskRecord:
    """Queue ``sample_draw`` (``rounds`` > 1: ``sample_rounds_draw``, statAP only;
    ``judge``: statAP steered by that judge at ``judge_weight``)."""
    if rounds > 1 and (method != Sample.Method.STATAP or per_run_quota):
        raise SampleError("rounds need the statap method without a per-run quota")
    if rounds > 1 and judge is not None:
        raise SampleError("a judge steers a one-shot sample, not rounds", field="judge")
    steered = f", steered by judge {judge.name}" if judge is not None else ""
    in_rounds = f" in {rounds} rounds" if rounds > 1 else ""
    largest = pool_largest_topic(pool=pool)
    holds = (
        f"the whole pool ({size} per topic asked)"
        if size >= largest > 0
        else f"{size} per topic"
    )
    task = task_record_create(
        kind=Kind.SAMPLE,
        user=user,
        label=f"Sample {name} of pool {pool.name}: {method}{steered}, {holds}"
        f"{in_rounds}, seed {seed}",
        collection=pool.collection,
        params={
            "pool": pool.pk,
            "size": size,
            "method": method,
            "seed": seed,
            "name": name,
            "per_run_quota": per_run_quota,
            "rounds": rounds,
            "judge": judge.pk if judge is not None else None,
            "judge_weight": judge_weight,
        },
    )
    _enqueue(task, "run")
    return task


def extend_task_start(*, sample: Sample, extra: int, user: Any) -> TaskRecord:
    """Queue ``sample_extend``."""
    task = task_record_create(
        kind=Kind.EXTEND,
        user=user,
        label=f"Extend sample {sample.name} of pool {sample.pool.name} by {extra}",
        collection=sample.pool.collection,
        params={"sample": sample.pk, "extra": extra},
    )
    _enqueue(task, "run")
    return task


def round_next_request(*, sample: Sample) -> None:
    """Queue the check that draws a sample's next round once its latest round is
    judged (``nuggets_app.inference.services.rounds.rounds_advance``)."""
    pk = sample.pk
    transaction.on_commit(lambda: queue.task_enqueue(queue.ROUNDS_ADVANCE, pk))


def _pool(task: TaskRecord) -> dict:
    params = task.params
    runs = Run.objects.filter(collection=task.collection)
    if params["runs"] != "all":
        runs = runs.filter(pk__in=params["runs"])
    reporter = ProgressReporter(task, "pooling")
    pool = pool_build(
        collection=task.collection,
        runs=list(runs),
        depth=params["depth"],
        name=params["name"],
        progress=reporter.set,
        topics=params.get("topics"),
    )
    summary = pool_summary(pool)
    return {
        "pool": pool.pk,
        "lines": [
            f"pool {pool.name}: {summary.runs} runs, depth {pool.depth}, "
            f"{len(summary.topics)} topics, {summary.documents} documents "
            f"({summary.single_run} from a single run)"
        ],
    }


def _sample_lines(sample: Sample) -> list[str]:
    records = sample.draws.values()
    distinct = sum(record["distinct"] for record in records)
    return [
        f"sample {sample.name} of pool {sample.pool.name}: {sample.method}, "
        f"{sample.size_text}"
        + (f" in {sample.rounds} rounds" if sample.rounds > 1 else "")
        + (
            f", steered by judge {sample.judge} at weight {sample.judge_weight:g}"
            if sample.judge is not None
            else ""
        )
        + f", seed {sample.seed}; {len(sample.draws)} topics, "
        f"{distinct} documents to judge"
    ]


def _sample(task: TaskRecord) -> dict:
    params = task.params
    reporter = ProgressReporter(task, "sampling")
    if params.get("rounds", 1) > 1:
        sample = sample_rounds_draw(
            pool=Pool.objects.get(pk=params["pool"]),
            budget=params["size"],
            rounds=params["rounds"],
            seed=params["seed"],
            name=params["name"],
            progress=reporter.set,
        )
        return {
            "sample": sample.pk,
            "pool": sample.pool_id,
            "lines": _sample_lines(sample),
        }
    sample = sample_draw(
        pool=Pool.objects.get(pk=params["pool"]),
        size=params["size"],
        method=params["method"],
        seed=params["seed"],
        name=params["name"],
        per_run_quota=params.get("per_run_quota", False),
        judge=Judge.objects.get(pk=params["judge"]) if params.get("judge") else None,
        judge_weight=params.get("judge_weight"),
        progress=reporter.set,
    )
    return {"sample": sample.pk, "pool": sample.pool_id, "lines": _sample_lines(sample)}


def _extend(task: TaskRecord) -> dict:
    reporter = ProgressReporter(task, "sampling")
    sample = sample_extend(
        sample=Sample.objects.select_related("pool").get(pk=task.params["sample"]),
        extra=task.params["extra"],
        progress=reporter.set,
    )
    return {"sample": sample.pk, "pool": sample.pool_id, "lines": _sample_lines(sample)}


_ACTIONS = {Kind.POOL: _pool, Kind.SAMPLE: _sample, Kind.EXTEND: _extend}


def staff_task_run(*, task_id: int, phase: str) -> str:
    """Run one phase of a task (``check`` or ``import`` of an upload, ``run`` of the
    others); returns the status it ended in."""
    task = TaskRecord.objects.select_related("collection").get(pk=task_id)
    if task.kind in uploads.UPLOAD_KINDS:
        return _run_upload(task, phase)
    task = task_record_execute(
        task=task,
        action=_ACTIONS[TaskRecord.Kind(task.kind)],
        expected_errors=(PoolError, SampleError, ValueError, Pool.DoesNotExist),
    )
    return task.status


def _run_upload(task: TaskRecord, phase: str) -> str:
    def describe(exc: Exception) -> str:
        return uploads.upload_error_text(task=task, exc=exc)

    if phase == "check":
        task = task_record_execute(
            task=task,
            action=lambda t: uploads.upload_check(task=t),
            running=Status.CHECKING,
            success=Status.CHECKED,
            describe_error=describe,
            expected_errors=uploads.IMPORT_ERRORS,
        )
        if task.status == Status.CHECKED and task.problems:
            TaskRecord.objects.filter(pk=task.pk).update(status=Status.REFUSED)
            task.status = Status.REFUSED
    elif phase == "import":
        task = task_record_execute(
            task=task,
            action=lambda t: uploads.upload_import(task=t),
            describe_error=describe,
            expected_errors=uploads.IMPORT_ERRORS,
        )
    else:
        raise ValueError(f"unknown phase {phase!r}")
    if task.is_final:
        uploads.upload_discard(task=task)
    return task.status
