"""Matching jobs run by a real Celery worker process on PostgreSQL and Redis."""

import numpy as np
import pytest

from matcher import MatchOptions, TopicMatcher
from nuggets_app.inference.services.evidence import evidence_unpack
from nuggets_app.inference.services.job_model import features_unpack, job_probabilities
from nuggets_app.inference.services.matching import (
    MatchParams,
    job_nugget_specs,
    match_job_launch,
)
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.models import (
    JobInference,
    JobTopicProbabilities,
    MatchChunk,
    MatchJob,
    MatchResult,
)
from tests.integration.worlds.cranfield_pool import (
    cranfield_world,
    wait_for,
    wait_until,
)

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


def _packed_evidence(job: MatchJob) -> dict[tuple[int, int], dict[int, list]]:
    """(topic, document) -> {nugget id: [(S - k, k) per matched shingle]}, unpacked
    from the chunks' stored evidence."""
    out: dict[tuple[int, int], dict[int, list]] = {}
    for chunk in MatchChunk.objects.filter(job=job):
        a = evidence_unpack(bytes(chunk.packed_evidence))
        terms = list(zip(a["term_entry"], a["term_d"], a["term_k"], strict=True))
        for entry, (doc_index, nugget) in enumerate(
            zip(a["entry_doc"], a["entry_nugget"], strict=True)
        ):
            key = (chunk.topic_id, int(a["docs"][doc_index]))
            out.setdefault(key, {})[int(nugget)] = [
                (int(d), int(k)) for e, d, k in terms if e == entry
            ]
    return out


def test_a_jobs_results_equal_the_matchers_direct_output(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    settings.MATCH_CHUNK_SIZE = 7
    world = cranfield_world(shared_data, assessor)
    job = match_job_launch(
        collection=world.collection,
        topics=world.topics,
        source="pool",
        pool=world.pool,
        params=MatchParams(k=3, lam=0.5),
    )
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
    # The lambda-free evidence kept for re-scoring is the matcher's, shingle by shingle.
    packed = _packed_evidence(job)
    for key, match in expected.items():
        wanted = {
            int(item.nugget): [
                (s - k, k)
                for s, k in zip(item.lengths, item.sizes, strict=True)
                if s is not None
            ]
            for item in match.evidence.nuggets
        }
        assert packed.get(key, {}) == wanted
    assert set(
        MatchChunk.objects.filter(job=job).values_list("attempts", flat=True)
    ) == {1}


def test_the_worker_stores_features_and_fits_the_model_when_the_job_is_done(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    settings.MATCH_CHUNK_SIZE = 7
    world = cranfield_world(shared_data, assessor, qids=("3", "4"), judge=14)
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool",
        pool=world.pool,
    )  # fmt: skip
    job = wait_for(job, {MatchJob.Status.DONE, MatchJob.Status.FAILED})
    assert job.status == MatchJob.Status.DONE, job.error
    stored = set()
    for chunk in MatchChunk.objects.filter(job=job):
        ids, matrix = features_unpack(bytes(chunk.packed_features))
        assert ids.tolist() == chunk.document_ids
        assert matrix.shape == (len(ids), len(FEATURE_NAMES))
        assert np.all(np.isfinite(matrix))
        stored |= {(chunk.topic_id, d) for d in ids.tolist()}
    assert stored == {(t.pk, d.pk) for t in world.topics for d in world.pooled[t.qid]}
    # The last chunk enqueued the fit: p for every pooled document, in [0, 1].
    wait_until(
        lambda: JobTopicProbabilities.objects.filter(job=job).exists(),
        what="the model fit",
    )
    columns = job_probabilities(job=job, override=False)
    assert sum(len(docs) for docs, _ in columns.values()) == 48
    assert all(np.all((p >= 0) & (p <= 1)) for _, p in columns.values())
    info = JobInference.objects.get(job=job)
    assert info.fit_info["judged"] == 28
    assert info.model["feature_names"] == list(FEATURE_NAMES)
