"""Killed workers, cancellation and failing chunks, with a real worker process.

Faults come from words in document text (see ``fault_worker``): every document here
is SLOWME (50 ms each) so a job lasts a few seconds and can be interrupted.
"""

import time

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.db.models import Count

from matcher import MatchOptions, TopicMatcher
from nuggets_app.inference.services.matching import (
    job_nugget_specs,
    match_job_cancel,
    match_job_launch,
    match_job_resume,
    match_supervise,
)
from nuggets_app.models import MatchChunk, MatchJob, MatchResult
from tests.integration.worlds.cranfield_pool import (
    cranfield_world,
    wait_for,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.timeout(150)]
FINAL = {MatchJob.Status.DONE, MatchJob.Status.FAILED, MatchJob.Status.CANCELLED}


def _chunks_done(job, count: int) -> None:
    """Wait until ``count`` chunks of the job are done."""
    wait_until(
        lambda: MatchJob.objects.get(pk=job.pk).chunks_done >= count,
        what=f"{count} chunks",
    )


def _launch(world):
    return match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )


def _slow_world(shared_data, assessor, settings, **markers):
    settings.MATCH_CHUNK_SIZE = 4
    docnos = [str(n) for n in range(1, 1400)]
    every = dict.fromkeys(docnos, "SLOWME")
    for docno, word in markers.items():
        every[docno.lstrip("d")] = f"SLOWME {word}"
    return cranfield_world(shared_data, assessor, markers=every)


def _assert_complete_and_exact(job, world):
    """One result per pooled (topic, document), equal to the matcher's output."""
    assert job.status == MatchJob.Status.DONE, job.error
    assert (job.docs_done, job.chunks_done) == (job.docs_total, job.chunks_total)
    rows = MatchResult.objects.filter(job=job)
    dupes = rows.values("topic", "document").annotate(n=Count("pk")).filter(n__gt=1)
    assert not dupes.exists()
    got = {(r.topic_id, r.document_id): r.score for r in rows}
    options = MatchOptions(k=job.k, lam=job.lam)
    want = {}
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk), options)
        for doc in world.pooled[topic.qid]:
            doc.refresh_from_db()
            want[(topic.pk, doc.pk)] = matcher.score(doc.text).score
    assert got == want


def test_a_killed_pool_process_loses_nothing(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings)
    job = _launch(world)
    _chunks_done(job, 3)
    running = list(MatchChunk.objects.filter(job=job, status="running"))
    celery_worker.kill_child()
    job = wait_for(job, FINAL)
    _assert_complete_and_exact(job, world)
    for chunk in running:
        chunk.refresh_from_db()
        assert chunk.attempts == 2  # the killed attempt, then the redelivered one


def test_a_killed_worker_is_recovered_by_the_supervisor(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings)
    job = _launch(world)
    _chunks_done(job, 3)
    celery_worker.kill_all()
    orphans = list(MatchChunk.objects.filter(job=job, status="running"))
    settings.MATCH_CHUNK_STALE_SECONDS = 1
    time.sleep(1.5)
    celery_worker.start()
    requeued = match_supervise()
    assert {c.pk for c in orphans} <= set(requeued[job.pk])
    job = wait_for(job, FINAL)
    _assert_complete_and_exact(job, world)


def test_a_killed_worker_is_recovered_by_the_next_worker_alone(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    """No beat and no call to the supervisor: the replacement worker finds the dead
    one's orphaned chunks (running, lock free) once their heartbeat has aged."""
    world = _slow_world(shared_data, assessor, settings)
    job = _launch(world)
    # Kill it mid-chunk: after 3 chunks, at a moment when a chunk is running (between
    # two chunks there would be nothing to orphan).
    wait_until(
        lambda: (
            MatchJob.objects.get(pk=job.pk).chunks_done >= 3
            and MatchChunk.objects.filter(job=job, status="running").exists()
        ),
        what="3 chunks and one running",
    )
    celery_worker.kill_all()
    orphans = list(MatchChunk.objects.filter(job=job, status="running"))
    assert orphans
    celery_worker.start()
    job = wait_for(job, FINAL, timeout=100)
    _assert_complete_and_exact(job, world)
    assert "re-queued orphaned chunks" in celery_worker.log_text()
    for chunk in orphans:
        chunk.refresh_from_db()
        assert chunk.attempts == 2


def _take_like_a_worker_that_dies(chunk_id: int) -> None:
    """Move the chunk's message from the queue to Redis's unacknowledged set, as a
    worker does when it takes a message, dated a minute ago: a worker that died then,
    before claiming the chunk."""
    import json
    import uuid

    from nuggets_app.celery import app

    queue = django_settings.CELERY_TASK_DEFAULT_QUEUE
    with app.connection_for_write() as conn:
        channel = conn.default_channel
        client = channel.client
        for raw in client.lrange(queue, 0, -1):
            message = json.loads(raw)
            if json.loads(_body(message))[0] == [chunk_id]:
                break
        else:
            raise AssertionError(f"no message for chunk {chunk_id}")
        client.lrem(queue, 1, raw)
        info = message["properties"]["delivery_info"]
        tag = str(uuid.uuid4())
        client.hset(
            channel.unacked_key,
            tag,
            json.dumps([message, info["exchange"], info["routing_key"]]),
        )
        client.zadd(channel.unacked_index_key, {tag: time.time() - 60})


def _body(message: dict) -> bytes:
    import base64

    return base64.b64decode(message["body"])


def test_a_message_taken_by_a_worker_that_died_before_claiming_is_restored(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings)
    celery_worker.kill_all()
    job = _launch(world)
    lost = MatchChunk.objects.filter(job=job).order_by("pk")[3]
    _take_like_a_worker_that_dies(lost.pk)
    settings.MATCH_ORPHAN_SECONDS = 1
    time.sleep(1.5)
    requeued = match_supervise()
    assert lost.pk in requeued[job.pk]
    lost.refresh_from_db()
    assert lost.status == "queued"
    celery_worker.start()
    job = wait_for(job, FINAL, timeout=100)
    _assert_complete_and_exact(job, world)


def _terminate_other_backends() -> int:
    """pg_terminate_backend on every connection to the test database but ours."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_dropped_database_connections_are_retried_without_a_supervisor(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings)
    job = _launch(world)
    _chunks_done(job, 3)
    killed = 0
    for _ in range(12):  # dropped while idle, while locking or claiming, mid-chunk
        killed += _terminate_other_backends()
        time.sleep(0.25)
    assert killed >= 1
    # Nothing runs the supervisor here: the worker alone must reconnect and finish.
    job = wait_for(job, FINAL, timeout=90)
    _assert_complete_and_exact(job, world)
    assert "retry: Retry in" in celery_worker.log_text()
    # A lost connection gives its attempt back: no chunk is near its budget.
    assert not MatchChunk.objects.filter(job=job, attempts__gt=2).exists()


def test_cancel_stops_dispatch_and_resume_finishes_the_same_job(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings)
    job = _launch(world)
    _chunks_done(job, 2)
    job = match_job_cancel(job=job)
    assert job.status == MatchJob.Status.CANCELLED
    from nuggets_app.celery import app

    with app.connection_for_write() as conn:
        client = conn.default_channel.client
        queue = django_settings.CELERY_TASK_DEFAULT_QUEUE
        wait_until(lambda: client.llen(queue) == 0, timeout=30, what="queue drained")
    time.sleep(1.5)  # longer than a heartbeat: a chunk in flight has stopped by now
    chunks = list(MatchChunk.objects.filter(job=job))
    assert all(c.started_at is None or c.started_at <= job.finished_at for c in chunks)
    assert sum(c.status == "done" for c in chunks) < job.chunks_total
    assert not any(c.status == "running" for c in chunks)

    match_job_resume(job=job)
    job = wait_for(job, FINAL)
    _assert_complete_and_exact(job, world)


def test_a_failing_chunk_retries_then_fails_the_job_with_its_error(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings, d184="FAILME")
    job = wait_for(_launch(world), {MatchJob.Status.FAILED}, timeout=60)
    bad = MatchChunk.objects.get(job=job, status="failed")
    assert bad.attempts == django_settings.MATCH_MAX_ATTEMPTS == 3
    assert "injected: the database went away" in bad.error
    assert job.error.startswith(f"topic {bad.topic.qid} chunk {bad.index}: ")
    assert "OperationalError" in job.error
    time.sleep(3)
    bad.refresh_from_db()
    assert bad.attempts == 3  # no more tries


def test_a_chunk_that_kills_its_worker_every_time_gives_up(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    world = _slow_world(shared_data, assessor, settings, d184="KILLME")
    job = wait_for(_launch(world), {MatchJob.Status.FAILED}, timeout=90)
    bad = MatchChunk.objects.get(job=job, status="failed")
    assert bad.attempts == 3
    assert "gave up after 3 attempts" in job.error
    assert "worker was lost" in job.error
