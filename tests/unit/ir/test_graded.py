"""Graded inference: the nugget rule, ordinal probabilities and expected gains, with
expected nDCG on exact grades checked against ir_measures on real Cranfield runs."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import ir_measures
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.expected import expected_ndcg
from nuggets_app.ir.graded import GradedError, Ordinal, nugget_grade, stat_ndcg

DATA = Path(__file__).resolve().parents[2] / "data" / "public" / "cranfield"


def test_nugget_rule_grades_by_strength_and_number_of_nuggets():
    # No nugget reaches the threshold: not relevant.
    assert nugget_grade({1: (3, 0.49)}) == 0
    # A strong match with a grade-2 nugget gives 2; a weak one counts a grade lower.
    assert nugget_grade({1: (2, 0.9)}) == 2
    assert nugget_grade({1: (2, 0.6)}) == 1
    # A weak match never drops below 1.
    assert nugget_grade({1: (1, 0.5)}) == 1
    # Two distinct nuggets matched add a grade; the top grade caps it.
    assert nugget_grade({1: (2, 0.9), 2: (1, 0.55)}) == 3
    assert nugget_grade({1: (3, 0.9), 2: (3, 0.9)}) == 3
    assert nugget_grade({1: (2, 0.9), 2: (1, 0.55)}, several=0) == 2
    with pytest.raises(GradedError, match="threshold"):
        nugget_grade({}, threshold=0.9, strong=0.5)


@given(st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_ordinal_probabilities_are_a_distribution_and_give_the_expected_gain(raw):
    o = Ordinal.from_levels(raw)
    assert all(a >= b for a, b in zip(o.cumulative, o.cumulative[1:], strict=False))
    probs = o.grade_probabilities()
    assert math.fsum(probs) == pytest.approx(1.0)
    assert min(probs) >= -1e-12
    gains = [0.0, *(2.0**g - 1 for g in range(1, len(raw) + 1))]
    direct = math.fsum(p * g for p, g in zip(probs, gains, strict=True))
    assert o.expected_gain(gains) == pytest.approx(direct)
    # The median grade: the first grade where the distribution function reaches 0.5
    # from above, i.e. P(grade >= m) >= 0.5 > P(grade >= m + 1).
    m = o.median_grade()
    tail = [math.fsum(probs[g:]) for g in range(len(probs))] + [0.0]
    assert tail[m] >= 0.5 - 1e-12
    assert tail[m + 1] < 0.5 + 1e-12


def test_ordinal_refuses_probabilities_outside_the_unit_interval():
    with pytest.raises(GradedError, match="outside"):
        Ordinal.from_levels([0.5, 1.2])
    with pytest.raises(GradedError, match="gains"):
        Ordinal.from_levels([0.5]).expected_gain([0, 1, 2])


def test_expected_ndcg_of_exact_grades_is_ir_measures_ndcg_on_cranfield():
    qrels = list(ir_measures.read_trec_qrels(str(DATA / "qrels.txt")))
    top = max(q.relevance for q in qrels)
    run_path = sorted((DATA / "runs").iterdir())[0]
    with gzip.open(run_path, "rt") as fh:
        run = [
            ir_measures.ScoredDoc(q, d, float(score))
            for q, _, d, _, score, _ in (line.split() for line in fh)
        ]
    want = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run)
    }
    grades: dict[str, dict[str, int]] = {}
    for q in qrels:
        grades.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    scored: dict[str, list[tuple[float, str]]] = {}
    for r in run:
        scored.setdefault(r.query_id, []).append((r.score, r.doc_id))
    checked = 0
    for qid, docs in grades.items():
        if qid not in scored:
            continue
        gains = {
            d: Ordinal.from_levels(
                [1.0 if g >= level else 0.0 for level in range(1, top + 1)]
            ).expected_gain()
            for d, g in docs.items()
        }
        # trec_eval's order: score descending, then docno descending.
        ranking = [d for _, d in sorted(scored[qid], reverse=True)]
        assert expected_ndcg(ranking, gains, 10) == pytest.approx(want[qid])
        # Every document sampled with certainty: the statAP-style estimate is nDCG.
        sampled = {d: (g, 1.0) for d, g in docs.items()}
        assert stat_ndcg(ranking, sampled, 10) == pytest.approx(want[qid])
        checked += 1
    assert checked == len(set(grades) & set(scored)) >= 20


def test_stat_ndcg_dcg_is_unbiased_over_poisson_samples():
    # Six documents with grades, each sampled independently with probability pi:
    # the mean of the Horvitz-Thompson DCG@3 over every sample, weighted by its
    # probability, is the true DCG@3 (checked through a fixed ideal DCG).
    import itertools

    grades = {"a": 3, "b": 0, "c": 2, "d": 1, "e": 0, "f": 2}
    pis = {"a": 0.5, "b": 0.9, "c": 0.25, "d": 1.0, "e": 0.3, "f": 0.6}
    ranking = ["c", "a", "b", "f", "d", "e"]
    true_dcg = sum(grades[d] / math.log2(i + 2) for i, d in enumerate(ranking[:3]))
    expected = 0.0
    for picks in itertools.product([0, 1], repeat=6):
        chosen = [d for d, p in zip(grades, picks, strict=True) if p]
        prob = math.prod(
            pis[d] if p else 1 - pis[d] for d, p in zip(grades, picks, strict=True)
        )
        dcg = sum(
            grades[d] / (pis[d] * math.log2(i + 2))
            for i, d in enumerate(ranking[:3])
            if d in chosen
        )
        expected += prob * dcg
    assert expected == pytest.approx(true_dcg)
    with pytest.raises(GradedError, match="outside"):
        stat_ndcg(ranking, {"a": (3, 0.0)}, 3)
