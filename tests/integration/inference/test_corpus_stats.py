"""A job's corpus statistics computed in parts: the merge equals one pass over the same
documents, and a part whose worker died is finished by the next one."""

from __future__ import annotations

import threading

import psycopg2
import pytest
from django.db import connection

from nuggets_app.inference.services import corpus_stats
from nuggets_app.learning.relevance_features import CorpusStats
from nuggets_app.models import (
    Document,
    JobInference,
    JobStatsPart,
    MatchChunk,
    MatchJob,
)
from tests.integration.worlds.cranfield_pool import cranfield_world, wait_until

CHUNK_SIZE = 8


@pytest.fixture(autouse=True)
def small_parts(monkeypatch):
    """Parts of ten documents, so the small world is cut into several."""
    monkeypatch.setattr(corpus_stats, "PART_DOCUMENTS_MIN", 10)
    corpus_stats.stats_cache_clear()


def _world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, qids=("1", "2", "3"), per_topic=30)


def _job(world) -> MatchJob:
    """A job's rows as a launch leaves them (the statistics read only its chunks),
    with no task enqueued."""
    job = MatchJob.objects.create(collection=world.collection)
    job.topics.set(world.topics)
    for topic in world.topics:
        ids = sorted(d.pk for d in world.pooled[topic.qid])
        MatchChunk.objects.bulk_create(
            MatchChunk(
                job=job, topic=topic, index=i, document_ids=ids[s : s + CHUNK_SIZE]
            )
            for i, s in enumerate(range(0, len(ids), CHUNK_SIZE))
        )
    return job


def _distinct_ids(world) -> list[int]:
    return sorted({d.pk for docs in world.pooled.values() for d in docs})


def _single_pass(world, job) -> CorpusStats:
    options = corpus_stats.job_options(job)
    docs = Document.objects.filter(pk__in=_distinct_ids(world)).order_by("pk")
    return CorpusStats.from_tokens(
        corpus_stats.document_terms(d.title, d.text, options) for d in docs
    )


def _assert_merged(world, job, stats) -> None:
    """Equal to one pass, stored with the job, and the parts gone."""
    reference = _single_pass(world, job)
    assert (stats.n_docs, stats.avg_len) == (reference.n_docs, reference.avg_len)
    assert stats.df == reference.df
    stored = JobInference.objects.get(job=job).stats
    assert corpus_stats.stats_from_json(stored) == reference
    assert not JobStatsPart.objects.filter(job=job).exists()


@pytest.mark.django_db
def test_parts_are_contiguous_slices_of_the_jobs_sorted_documents(
    shared_data, assessor
):
    world = _world(shared_data, assessor)
    job = _job(world)
    assert corpus_stats.stats_parts_plan(job=job) is None
    ids = _distinct_ids(world)
    parts = list(JobStatsPart.objects.filter(job=job).order_by("index"))
    assert len(parts) == min(corpus_stats.PARTS_MAX, len(ids) // 10) > 1
    assert [d for part in parts for d in part.document_ids] == ids
    sizes = [len(part.document_ids) for part in parts]
    assert max(sizes) - min(sizes) <= 1
    # A second caller finds the parts made: none added.
    assert corpus_stats.stats_parts_plan(job=job) is None
    assert JobStatsPart.objects.filter(job=job).count() == len(parts)


def test_a_job_smaller_than_two_parts_is_one_part(monkeypatch):
    monkeypatch.setattr(corpus_stats, "PART_DOCUMENTS_MIN", 5000)
    assert corpus_stats.parts_slices(list(range(9999))) == [list(range(9999))]
    assert corpus_stats.parts_slices([]) == [[]]


@pytest.mark.django_db
def test_parts_left_not_done_and_unlocked_are_finished_and_merged_by_the_next_caller(
    shared_data, assessor
):
    world = _world(shared_data, assessor)
    job = _job(world)
    # A worker made the parts and died before it finished any: no lock, none done.
    corpus_stats.stats_parts_plan(job=job)
    assert JobStatsPart.objects.filter(job=job, done=False).count() > 1
    stats = corpus_stats.job_stats_ensure(job=job)
    _assert_merged(world, job, stats)
    # Read back, not computed again.
    corpus_stats.stats_cache_clear()
    assert corpus_stats.job_stats_ensure(job=job) == stats


@pytest.mark.django_db
def test_deleting_a_job_deletes_its_statistics_parts(shared_data, assessor):
    job = _job(_world(shared_data, assessor))
    corpus_stats.stats_parts_plan(job=job)
    assert JobStatsPart.objects.filter(job=job).exists()
    job.delete()
    assert not JobStatsPart.objects.exists()


def _waiting_on_a_part(watcher) -> bool:
    with watcher.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query ILIKE '%jobstatspart%'"
        )
        return cursor.fetchone()[0] > 0


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks need PostgreSQL"
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_a_part_whose_worker_dies_holding_it_is_finished_by_a_waiting_worker(
    shared_data, assessor
):
    world = _world(shared_data, assessor)
    job = _job(world)
    corpus_stats.stats_parts_plan(job=job)
    first = JobStatsPart.objects.get(job=job, index=0)
    params = connection.get_connection_params()
    # Another worker's connection claims the first part, as a claim does.
    holder = psycopg2.connect(**params)
    with holder.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM nuggets_app_jobstatspart WHERE id = %s FOR UPDATE",
            [first.pk],
        )
    errors: list[BaseException] = []

    def die_once_waited_on() -> None:
        watcher = psycopg2.connect(**params)
        watcher.autocommit = True
        try:
            wait_until(lambda: _waiting_on_a_part(watcher), what="a waiting worker")
        except BaseException as exc:  # collected: the assertion below names it
            errors.append(exc)
        finally:
            # The worker dies: its connection drops, its lock with it, its part
            # still not done.
            holder.close()
            watcher.close()

    dying = threading.Thread(target=die_once_waited_on)
    dying.start()
    # This worker computes every free part, waits on the held one, then finishes it.
    stats = corpus_stats.job_stats_ensure(job=job)
    dying.join()
    assert errors == []
    _assert_merged(world, job, stats)
