"""Matching jobs run by a real Celery worker process on PostgreSQL and Redis."""

import pytest

from matcher import MatchOptions, TopicMatcher
from nuggets_app.models import MatchChunk, MatchJob, MatchResult
from nuggets_app.services.matching import job_nugget_specs, match_job_launch
from tests.integration.jobs.world import cranfield_world, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.timeout(120)]


def _expected(job: MatchJob, world) -> dict[tuple[int, int], object]:
    """The matcher's own output for every pooled (topic, document)."""
    out = {}
    options = MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk), options)
        for doc in world.pooled[topic.qid]:
            out[(topic.pk, doc.pk)] = matcher.score(doc.text)
    return out


def test_a_jobs_results_equal_the_matchers_direct_output(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    settings.MATCH_CHUNK_SIZE = 7
    world = cranfield_world(shared_data, assessor)
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool",
        pool=world.pool, k=3, lam=0.5,
    )  # fmt: skip
    assert job.chunks_total == 8  # 2 topics x ceil(24 / 7)
    job = wait_for(job, {MatchJob.Status.DONE, MatchJob.Status.FAILED})
    assert job.status == MatchJob.Status.DONE, job.error
    assert (job.docs_done, job.chunks_done) == (48, 8)

    expected = _expected(job, world)
    results = {
        (r.topic_id, r.document_id): r for r in MatchResult.objects.filter(job=job)
    }
    assert results.keys() == expected.keys()
    assert any(m.score > 0 for m in expected.values())
    for key, match in expected.items():
        row = results[key]
        assert row.score == pytest.approx(match.score, abs=1e-12)
        assert row.nugget_id == (int(match.nugget) if match.nugget else None)
        assert row.spans == [list(s) for s in match.spans]
        assert row.shingle_spans == (match.evidence.to_json() if match.score else {})
    assert set(
        MatchChunk.objects.filter(job=job).values_list("attempts", flat=True)
    ) == {1}
