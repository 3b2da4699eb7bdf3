"""The relevance model inside matching jobs: features stored per chunk, the fit, p with
human overrides, model rules, and topics without nuggets."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from matcher import MatchOptions, TopicMatcher
from nuggets_app.errors import DomainError
from nuggets_app.inference.services import corpus_stats
from nuggets_app.inference.services import job_model as relevance
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import qrels_export
from nuggets_app.inference.services.job_model import (
    features_unpack,
    job_model_fit,
    job_probabilities,
)
from nuggets_app.inference.services.matching import job_nugget_specs, match_job_launch
from nuggets_app.inference.services.readiness import rule_undecided
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.learning import relevance_features as model_ir
from nuggets_app.learning import relevance_model
from nuggets_app.models import (
    JobInference,
    Judgment,
    MatchChunk,
    Nugget,
    Sample,
    SampleDocument,
)
from tests.integration.worlds.cranfield_pool import (
    cranfield_world,
    pool_job,
    run_inline,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(
        shared_data, assessor, qids=("1", "2", "3"), per_topic=30, judge=14
    )


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=8)


def _pooled_terms(world, job) -> dict[int, list[str]]:
    options = MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)
    docs = {d.pk: d for docs in world.pooled.values() for d in docs}
    return {
        pk: corpus_stats.document_terms(doc.title, doc.text, options)
        for pk, doc in docs.items()
    }


def test_every_pooled_document_has_its_features_stored(world, job):
    info = JobInference.objects.get(job=job)
    assert info.feature_names == list(model_ir.FEATURE_NAMES)
    terms = _pooled_terms(world, job)
    # The job's BM25 statistics are those of every document it matched.
    stats = corpus_stats.stats_from_json(info.stats)
    reference = model_ir.CorpusStats.from_tokens(terms[pk] for pk in sorted(terms))
    assert stats == reference
    stored = {}
    for chunk in MatchChunk.objects.filter(job=job):
        ids, matrix = features_unpack(bytes(chunk.packed_features))
        assert matrix.shape == (len(chunk.document_ids), len(model_ir.FEATURE_NAMES))
        for doc_id, row in zip(ids.tolist(), matrix, strict=True):
            stored[(chunk.topic_id, doc_id)] = row
    expected_keys = {(t.pk, d.pk) for t in world.topics for d in world.pooled[t.qid]}
    assert stored.keys() == expected_keys
    # Recompute one topic's features from the matcher's own scores and compare.
    topic = world.topics[0]
    evidence = relevance.topic_evidence_load(job=job, topic_id=topic.pk)
    matcher = TopicMatcher(job_nugget_specs(job, topic.pk), MatchOptions(lam=job.lam))
    for doc in world.pooled[topic.qid]:
        minspan = {
            item.nugget: item.score(job.lam)
            for item in matcher.score(doc.text).evidence.nuggets
        }
        want = model_ir.document_features(
            evidence, stats, doc.docno, terms[doc.pk], minspan=minspan
        )
        assert stored[(topic.pk, doc.pk)].tolist() == pytest.approx(want, rel=1e-12)


def test_fit_stores_a_probability_for_every_pooled_document(world, job):
    summary = job_model_fit(job=job)
    assert summary.documents == 90
    assert summary.judged == 42
    columns = job_probabilities(job=job, override=False)
    assert {t for t in columns} == {t.pk for t in world.topics}
    for docs, p in columns.values():
        assert len(docs) == 30
        assert np.all((p >= 0) & (p <= 1))
    info = JobInference.objects.get(job=job)
    model = relevance_model.RelevanceModel.from_json(
        __import__("json").dumps(info.model)
    )
    assert model.feature_names == model_ir.FEATURE_NAMES
    bins = info.fit_info["reliability"]["bins"]
    assert sum(b["n"] for b in bins) == info.fit_info["reliability"]["n"] == 42


def test_human_judgments_override_the_model(world, job, assessor):
    job_model_fit(job=job)
    judged = {
        (j.topic_id, j.document_id): j.relevance
        for j in Judgment.objects.filter(topic__in=world.topics)
    }
    raw = job_probabilities(job=job, override=False)
    merged = job_probabilities(job=job)
    for topic_id, (docs, p) in merged.items():
        for i, doc_id in enumerate(docs.tolist()):
            grade = judged.get((topic_id, doc_id))
            if grade is None:
                assert p[i] == raw[topic_id][1][i]
            else:
                assert p[i] == float(grade >= 1)
    # A new judgment overrides at once, without a refit.
    topic = world.topics[0]
    doc = world.pooled[topic.qid][-1]
    assert (topic.pk, doc.pk) not in judged
    Judgment.objects.create(topic=topic, document=doc, assessor=assessor, relevance=1)
    docs, p = job_probabilities(job=job)[topic.pk]
    assert p[docs.tolist().index(doc.pk)] == 1.0


def test_refit_and_rules_never_read_document_text(world, job, monkeypatch):
    def no_features(*args, **kwargs):
        raise AssertionError("features were computed again")

    monkeypatch.setattr(model_ir, "document_features", no_features)
    with CaptureQueriesContext(connection) as queries:
        job_model_fit(job=job)
        job_model_fit(job=job)
        for rule in (
            DecisionRule(kind="probability", threshold=0.5),
            DecisionRule(kind="expected_f1"),
            DecisionRule(kind="top_n", n=5),
        ):
            decided = rule_apply(job=job, rule=rule)
            assert sum(len(d) for d in decided.values()) == 90
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert "nuggets_app_document" not in sql  # not even a docno, let alone text
    assert "nuggets_app_matchchunk" in sql  # the packed features


def test_model_rules_follow_the_probabilities(world, job):
    job_model_fit(job=job)
    columns = job_probabilities(job=job, override=False)
    for threshold in (0.3, 0.5, 0.8):
        decided = rule_apply(
            job=job, rule=DecisionRule(kind="probability", threshold=threshold)
        )
        for topic_id, (docs, p) in columns.items():
            assert {d for d, keep in decided[topic_id].items() if keep} == {
                d
                for d, v in zip(docs.tolist(), p.tolist(), strict=True)
                if v >= threshold
            }
    top = rule_apply(job=job, rule=DecisionRule(kind="top_n", n=4))
    for topic_id, (docs, p) in columns.items():
        chosen = {d for d, keep in top[topic_id].items() if keep}
        best = sorted(zip(docs.tolist(), p.tolist(), strict=True), key=lambda x: -x[1])
        assert len(chosen) == 4
        assert min(p[docs.tolist().index(d)] for d in chosen) >= best[4][1]
    ef1 = rule_apply(job=job, rule=DecisionRule(kind="expected_f1"))
    for topic_id, (docs, p) in columns.items():
        chosen = [v for d, v in zip(docs.tolist(), p.tolist(), strict=True)
                  if ef1[topic_id][d]]  # fmt: skip
        # Brute force: the p-threshold set with the best ratio-of-expectations F1.
        total = p.sum()
        best = max(
            (2 * p[p >= t].sum() / ((p >= t).sum() + total), t) for t in set(p.tolist())
        )
        assert sorted(chosen) == sorted(p[p >= best[1]].tolist())


def test_a_rule_on_p_needs_a_fitted_model(job):
    with pytest.raises(DomainError, match="no fitted probabilities"):
        rule_apply(job=job, rule=DecisionRule(kind="probability"))


# --- topics without nuggets --------------------------------------------------------------
@pytest.fixture
def nuggetless(world, settings):
    """A job over the whole pool with nuggets for topics 1-2 only (the bug report)."""
    Nugget.objects.filter(topic=world.topics[2]).delete()
    return pool_job(world, settings, chunk_size=8)


def test_the_paper_rule_leaves_a_nuggetless_topics_unjudged_documents_out(
    world, nuggetless
):
    topic = world.topics[2]
    rule = DecisionRule(kind="threshold", threshold=0.5)
    assert [t.qid for t in rule_undecided(nuggetless, rule)] == ["3"]
    judged = {
        j.document.docno: j.relevance
        for j in Judgment.objects.filter(topic=topic).select_related("document")
    }
    for kind in ("inferred", "merged"):
        export = qrels_export(
            collection=world.collection, kind=kind, job=nuggetless, rule=rule
        )
        lines = [line.split() for line in export.text().splitlines()]
        topic3 = {docno: int(rel) for qid, _, docno, rel in lines if qid == "3"}
        # Inferred: nothing for topic 3; merged: only what people judged.
        assert topic3 == ({} if kind == "inferred" else judged)
        assert export.provenance["undecided_topics"] == ["3"]
        assert "no nuggets" in export.provenance["warnings"][0]
        assert {qid for qid, *_ in lines} >= {"1", "2"}


def test_a_nuggetless_topic_gets_probabilities_from_its_other_features(
    world, nuggetless
):
    job_model_fit(job=nuggetless)
    topic = world.topics[2]
    docs, p = job_probabilities(job=nuggetless, override=False)[topic.pk]
    assert len(docs) == 30
    assert np.all((p > 0) & (p < 1))
    assert len(set(p.tolist())) > 1  # not one constant "all non-relevant"
    rule = DecisionRule(kind="probability", threshold=0.5)
    assert rule_undecided(nuggetless, rule) == []
    export = qrels_export(
        collection=world.collection, kind="inferred", job=nuggetless, rule=rule
    )
    lines = [line.split() for line in export.text().splitlines()]
    assert sum(1 for qid, *_ in lines if qid == "3") == 30


# --- a job over a judged sample: anchoring to its Horvitz-Thompson estimate -------------
def _sample_job(world, inclusion: float, extra_unjudged: bool = False):
    """A job over the pool with a sample whose drawn documents are the judged ones
    (inclusion probability ``inclusion`` each); ``extra_unjudged`` also draws one
    document nobody has judged yet (a sample still being judged)."""
    sample = Sample.objects.create(
        pool=world.pool, name="half", method=Sample.Method.UNIFORM, size=14, seed=1
    )
    for topic in world.topics:
        judged = list(
            Judgment.objects.filter(topic=topic).values_list("document_id", flat=True)
        )
        if extra_unjudged:
            judged.append(
                next(d.pk for d in world.pooled[topic.qid] if d.pk not in judged)
            )
        SampleDocument.objects.bulk_create(
            SampleDocument(
                sample=sample,
                topic=topic,
                document_id=d,
                inclusion_prob=inclusion,
                order=i + 1,
            )
            for i, d in enumerate(judged)
        )
    relevance.features_cache_clear()
    job = match_job_launch(
        collection=world.collection,
        topics=world.topics,
        source="pool",
        pool=world.pool,
        sample=sample,
    )
    return run_inline(job)


def test_a_fully_judged_sample_anchors_the_expected_count_to_its_estimate(
    world, settings
):
    settings.MATCH_CHUNK_SIZE = 8
    job = _sample_job(world, inclusion=0.5)
    job_model_fit(job=job)
    info = JobInference.objects.get(job=job)
    relevant = Judgment.objects.filter(topic__in=world.topics, relevance__gte=1).count()
    # Horvitz-Thompson: every judged relevant document stands for 1 / 0.5 = 2.
    assert info.fit_info["pool_relevant"] == pytest.approx(2 * relevant)
    model = relevance_model.RelevanceModel.from_json(
        __import__("json").dumps(info.model)
    )
    assert model.shift != 0
    raw = job_probabilities(job=job, override=False)
    merged = job_probabilities(job=job)
    judged = {
        (j.topic_id, j.document_id)
        for j in Judgment.objects.filter(topic__in=world.topics)
    }
    expected = sum(
        float(p) if (t, d) not in judged else float(merged[t][1][i])
        for t, (docs, values) in raw.items()
        for i, (d, p) in enumerate(zip(docs.tolist(), values.tolist(), strict=True))
    )
    assert expected == pytest.approx(2 * relevant, rel=1e-6)


def test_a_sample_still_being_judged_does_not_anchor(world, settings):
    settings.MATCH_CHUNK_SIZE = 8
    job = _sample_job(world, inclusion=0.5, extra_unjudged=True)
    job_model_fit(job=job)
    info = JobInference.objects.get(job=job)
    assert info.fit_info["pool_relevant"] is None
    assert info.model["shift"] == 0.0
