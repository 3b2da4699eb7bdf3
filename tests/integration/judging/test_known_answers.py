"""Known answers: marked from real qrels, interleaved in a sample's queues, judged as
checks; they reach no estimate (statAP and the default model-assisted estimate are
the same with and without them) and each assessor's agreement with them is counted."""

from __future__ import annotations

import pytest

from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.evaluation.services.estimates import job_sample_estimates
from nuggets_app.inference.services import job_model
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.judging.selectors.quality import assessor_quality
from nuggets_app.judging.services.judgments import judgment_record
from nuggets_app.judging.services.known_answers import (
    KnownAnswerError,
    known_answers_add,
    known_answers_interleave,
)
from nuggets_app.models import (
    Assignment,
    Judgment,
    KnownAnswer,
    PoolDocument,
    SampleDocument,
)
from nuggets_app.pooling.services.samples import sample_extend
from tests.integration.worlds.judged_job import evaluation_world

pytestmark = pytest.mark.django_db


def _figures(world) -> dict:
    """statAP per run and the default (model-assisted) estimate per run, with the
    model refitted on the judgments as they stand."""
    job_model.features_cache_clear()
    job_model.job_model_fit(job=world.job)
    runs = {n: world.file_runs[n] for n in sorted(world.file_runs)}
    prels = sample_prels(world.sample)
    statap = {
        n: (
            statap_evaluate(prels, r).summary.stat_map,
            statap_evaluate(prels, r).summary.var_map,
        )
        for n, r in runs.items()
    }
    default = job_sample_estimates(job=world.job, sample=world.sample, runs=runs)
    return {
        "prels": {q: (p.rel, p.inclusion_prob) for q, p in prels.items()},
        "statap": statap,
        "default": {n: (e.ap.estimate, e.ap.ci95) for n, e in default.items()},
    }


def _mark_pooled_unsampled(world, per_topic: int) -> None:
    """Known answers from the real qrels (0 where the qrels do not list the
    document) for pooled documents the sample did not draw: the documents whose
    judgment, were it counted, would move the model-assisted estimate."""
    drawn = set(
        SampleDocument.objects.filter(sample=world.sample).values_list(
            "topic_id", "document_id"
        )
    )
    chosen: dict[int, int] = {}
    for row in (
        PoolDocument.objects.filter(pool=world.pool)
        .order_by("topic__qid", "document__docno")
        .select_related("topic", "document")
    ):
        key = (row.topic_id, row.document_id)
        if key in drawn or chosen.get(row.topic_id, 0) >= per_topic:
            continue
        chosen[row.topic_id] = chosen.get(row.topic_id, 0) + 1
        grade = world.file_qrels.get(row.topic.qid, {}).get(row.document.docno, 0)
        KnownAnswer.objects.create(
            topic=row.topic, document=row.document, relevance=int(grade >= 1),
            source="qrels:cranfield",
        )  # fmt: skip


def test_known_answers_are_judged_as_checks_and_never_enter_an_estimate(
    shared_data, assessor
):
    world = evaluation_world(shared_data, assessor)
    for topic in world.topics.values():
        Assignment.objects.create(sample=world.sample, topic=topic, assessor=assessor)
    without = _figures(world)
    _mark_pooled_unsampled(world, per_topic=3)
    done = known_answers_interleave(sample=world.sample, rate=0.25, seed=3)
    assert sum(done.added.values()) == 2 * len(world.topics)  # round(0.25 * 8)
    checks = SampleDocument.queue.filter(sample=world.sample, known=True)
    assert checks.count() == 2 * len(world.topics)
    check_keys = list(checks.values_list("topic_id", "document_id"))
    # Queues stay numbered 1..n, drawn documents first and last.
    for topic in world.topics.values():
        queue = list(
            SampleDocument.queue.filter(sample=world.sample, topic=topic)
            .order_by("order")
            .values_list("order", "known")
        )
        assert [o for o, _ in queue] == list(range(1, len(queue) + 1))
        assert not queue[0][1]
        assert not queue[-1][1]
    # The assessor grades every check the wrong way round.
    answers = {
        (k.topic_id, k.document_id): k.relevance for k in KnownAnswer.objects.all()
    }
    for item in checks.select_related("topic", "document"):
        judgment_record(
            assessor=assessor, topic=item.topic, document=item.document,
            relevance=1 - answers[(item.topic_id, item.document_id)],
        )  # fmt: skip
    assert Judgment.objects.filter(quality_check=True).count() == checks.count()
    with_checks = _figures(world)
    assert with_checks == without
    # Counted as labels, the same judgments would move the default estimate: the
    # equality above is not an accident of where they sit.
    Judgment.objects.filter(quality_check=True).update(quality_check=False)
    assert _figures(world)["default"] != without["default"]
    Judgment.objects.filter(
        document__in=checks.values("document"), topic__in=checks.values("topic")
    ).update(quality_check=True)
    (row,) = assessor_quality(collection=world.collection, level=0.8)
    assert (row.username, row.known.k, row.known.n) == ("alice", 0, checks.count())
    assert row.known.high < 0.8
    assert row.flag.startswith("clearly below 80%")
    # Twice changes nothing.
    again = known_answers_interleave(sample=world.sample, rate=0.25, seed=3)
    assert again.added == {}
    assert set(again.skipped.values()) == {"already holds known answers"}
    # Extending the sample appends after the whole queue; a known answer the
    # sampler draws becomes a drawn document and its grades human labels.
    sample_extend(sample=world.sample, extra=40)
    for topic in world.topics.values():
        orders = list(
            SampleDocument.queue.filter(sample=world.sample, topic=topic)
            .order_by("order")
            .values_list("order", flat=True)
        )
        assert orders == list(range(1, len(orders) + 1))
    drawn = SampleDocument.objects.filter(sample=world.sample)
    for topic_id, doc_id in check_keys:
        item = SampleDocument.queue.get(
            sample=world.sample, topic_id=topic_id, document_id=doc_id
        )
        counted = Judgment.objects.get(
            topic_id=topic_id, document_id=doc_id, assessor=assessor
        )
        assert counted.quality_check == item.known
        assert item.known == (not drawn.filter(pk=item.pk).exists())


def test_known_answers_come_from_imported_qrels_or_decisions(shared_data, assessor):
    world = evaluation_world(shared_data, assessor, judge=False)
    added = known_answers_add(
        collection=world.collection, source="qrels", qrels=world.qrels, per_topic=4
    )
    rows = KnownAnswer.objects.select_related("topic", "document")
    assert added == rows.count() <= 4 * len(world.topics)
    for k in rows:
        assert k.relevance == world.file_qrels[k.topic.qid][k.document.docno]
        assert k.source == "qrels:cranfield"
    assert known_answers_add(
        collection=world.collection, source="qrels", qrels=world.qrels, per_topic=4
    ) == 0  # fmt: skip
    with pytest.raises(KnownAnswerError, match="rate must be in"):
        known_answers_interleave(sample=world.sample, rate=0)
    with pytest.raises(KnownAnswerError, match="source must be"):
        known_answers_add(collection=world.collection, source="guess")
