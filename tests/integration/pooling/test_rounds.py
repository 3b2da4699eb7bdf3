"""Samples in rounds on PostgreSQL: sample_rounds_draw, sample_round_next, and the
next round drawn once the latest one is judged (inference.services.rounds).

Expected weights come from nuggets_app.ir.rounds applied to the stored rounds, whose
unbiasedness is checked by enumeration in tests/unit/ir/test_rounds.py."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.inference.services.exports import prels_export
from nuggets_app.inference.services.rounds import (
    round_judged,
    rounds_advance,
    rounds_overview,
)
from nuggets_app.ir.rounds import Round, round_lambdas, round_weights
from nuggets_app.judging.services.judgments import judgment_record
from nuggets_app.models import Assignment, Sample, SampleDocument
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.rounds import (
    sample_round_next,
    sample_rounds_draw,
    sample_var_weights,
)
from nuggets_app.pooling.services.samples import SampleError
from tests import factories as f
from tests.integration.pooling.test_pools import make_runs

pytestmark = pytest.mark.django_db
TOL = 1e-12


@pytest.fixture
def pool():
    letters = [f"d{i:02d}" for i in range(20)]
    collection, runs = make_runs(
        {
            "1": {"run1": letters[:15], "run2": letters[::-1][:12]},
            "2": {"run1": letters[5:], "run2": letters[:10]},
        }
    )
    return pool_build(collection=collection, runs=runs, depth=20, name="p")


def stored(sample: Sample) -> dict[str, list[SampleDocument]]:
    out: dict[str, list[SampleDocument]] = {}
    rows = SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    )
    for row in rows.order_by("topic__qid", "order"):
        out.setdefault(row.topic.qid, []).append(row)
    return out


def test_rounds_record_their_probabilities_and_the_weights_of_ir_rounds(pool):
    sample = sample_rounds_draw(pool=pool, budget=6, rounds=3, seed=3, name="r")
    assert (sample.rounds, sample.rounds_drawn, sample.size) == (3, 1, 6)
    first = stored(sample)
    for rows in first.values():
        assert len(rows) == 2
        assert {r.round for r in rows} == {1}
        for r in rows:  # one round drawn: the weight is 1/π_1
            assert r.inclusion_prob == pytest.approx(r.round_prob, abs=TOL)
    p = {"1": {f"d{i:02d}": i / 20 for i in range(20)}}
    sample = sample_round_next(sample=sample, probabilities=p)
    assert sample.rounds_drawn == 2
    second = stored(sample)
    lambdas = round_lambdas([2, 2, 2])
    for qid, rows in second.items():
        assert [r.order for r in rows] == list(range(1, len(rows) + 1))
        # the earlier queue is kept as it was, new documents at its end
        assert [r.document_id for r in rows[:2]] == [r.document_id for r in first[qid]]
        assert [r.round for r in rows] == [1, 1, 2, 2]
        rounds = [
            Round(
                t,
                tuple(r.document.docno for r in rows if r.round == t),
                {r.document.docno: r.round_prob for r in rows if r.round == t},
            )
            for t in (1, 2)
        ]
        expected = round_weights(rounds, lambdas)
        for r in rows:
            w = expected[r.document.docno]
            assert r.inclusion_prob == pytest.approx(w.inclusion_prob, abs=TOL)
            assert r.var_weight == pytest.approx(w.var_weight, abs=TOL)
            assert 0 < r.inclusion_prob <= 1
        assert all(
            r.round_prob <= lambdas[1] / sum(lambdas[:2]) + TOL for r in rows[2:]
        )
    # a concurrent request for the round already drawn changes nothing
    again = sample_round_next(sample=sample, probabilities=p, after=1)
    assert again.rounds_drawn == 2
    assert len(stored(again)["1"]) == 4
    sample = sample_round_next(sample=sample, probabilities={})
    assert sample.rounds_drawn == 3
    assert set(sample_var_weights(sample)) == {"1", "2"}
    with pytest.raises(SampleError, match="all its 3 rounds"):
        sample_round_next(sample=sample, probabilities={})


def test_bad_requests_are_refused(pool):
    with pytest.raises(SampleError, match="at least 2"):
        sample_rounds_draw(pool=pool, budget=6, rounds=1, seed=1, name="x")
    with pytest.raises(SampleError, match="cannot fill"):
        sample_rounds_draw(pool=pool, budget=2, rounds=3, seed=1, name="x")
    sample_rounds_draw(pool=pool, budget=6, rounds=2, seed=1, name="x")
    with pytest.raises(SampleError, match="other parameters"):
        sample_rounds_draw(pool=pool, budget=6, rounds=3, seed=1, name="x")


def test_the_next_round_comes_when_the_assigned_assessors_judged_this_one(pool):
    sample = sample_rounds_draw(pool=pool, budget=4, rounds=2, seed=7, name="r")
    alice, bob = f.UserFactory(username="alice"), f.UserFactory(username="bob")
    for topic_id in {r.topic_id for rows in stored(sample).values() for r in rows}:
        Assignment.objects.create(sample=sample, topic_id=topic_id, assessor=alice)
    assert not round_judged(sample)
    assert rounds_advance(sample_id=sample.pk) is False
    rows = [r for rows in stored(sample).values() for r in rows]
    for i, row in enumerate(rows):
        # bob is not assigned: his grades do not count
        f.JudgmentFactory(topic=row.topic, document=row.document, assessor=bob)
        if i < len(rows) - 1:
            judgment_record(
                assessor=alice, topic=row.topic, document=row.document, relevance=i % 2
            )
    assert rounds_advance(sample_id=sample.pk) is False
    last = rows[-1]
    judgment_record(
        assessor=alice, topic=last.topic, document=last.document, relevance=1
    )
    assert round_judged(sample)
    assert rounds_overview(sample)[0].judged == len(rows)
    assert rounds_advance(sample_id=sample.pk) is True
    sample.refresh_from_db()
    assert sample.rounds_drawn == 2
    after = stored(sample)
    assert sum(len(v) for v in after.values()) == 8
    overview = rounds_overview(sample)
    assert [(r.number, r.drawn, r.judged) for r in overview] == [(1, 4, 4), (2, 4, 0)]
    assert overview[0].runs == 2
    assert overview[0].mean_width >= 0
    assert rounds_advance(sample_id=sample.pk) is False  # all rounds drawn

    # prels: the effective π per judged document, the rounds in the sidecar
    exported = prels_export(sample=sample)
    rows = {
        (r.topic.qid, r.document.docno): r for rs in stored(sample).values() for r in rs
    }
    assert len(exported.lines) == 4
    for line, extra in zip(exported.lines, exported.provenance["lines"], strict=True):
        qid, docno, _, method, prob = line.split()
        row = rows[(qid, docno)]
        assert (method, float(prob)) == ("1", row.inclusion_prob)
        assert extra == {
            "round": 1,
            "round_prob": row.round_prob,
            "var_weight": row.var_weight,
        }
    assert exported.provenance["rounds_drawn"] == 2
    prels = sample_prels(sample)
    for (qid, docno), row in rows.items():
        if docno in prels[qid].rel:
            assert prels[qid].var_weight[docno] == row.var_weight


def test_sample_command_draws_rounds(pool, capsys):
    call_command("sample", pool="p", name="cmd", size=4, rounds=2, seed=1, verbosity=0)
    out = capsys.readouterr().out
    assert "1 of 2 rounds drawn" in out
    sample = Sample.objects.get(name="cmd")
    assert sample.rounds == 2
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="not judged"):
        call_command("sample", pool="p", name="cmd", next_round=True, verbosity=0)
