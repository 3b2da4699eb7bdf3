"""The judge audit against brute-force counts: exact on a census, intervals inside
their domains around their values, and close to unbiased over repeated samples."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.judge_audit import (
    Estimate,
    JudgeAudit,
    JudgeAuditError,
    PoolPair,
    audit_judge,
    plan_sample_size,
)
from nuggets_app.ir.judge_design import (
    GRADE_BINS,
    effective_df,
    kappa,
    kappa_grad,
    proportion_interval,
)
from nuggets_app.ir.proportions import wilson_interval
from nuggets_app.ir.sampling import draw_uniform

LEVEL = 2


def brute_force(pairs: list[PoolPair], level: int = LEVEL) -> dict[str, float]:
    """Kappa, precision, recall, R and the count ratio by counting every pair."""
    a = b = c = d = 0
    for p in pairs:
        y = p.human_grade is not None and p.human_grade >= level
        j = p.judge_grade is not None and p.judge_grade >= level
        a += j and y
        b += j and not y
        c += y and not j
        d += not (j or y)
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return {
        "kappa": (po - pe) / (1 - pe) if pe < 1 else math.nan,
        "precision": a / (a + b) if a + b else math.nan,
        "recall": a / (a + c) if a + c else math.nan,
        "R": a + c,
        "count_ratio": (a + b) / (a + c) if a + c else math.nan,
        "judge_count": a + b,
    }


grades = st.one_of(st.none(), st.integers(0, 3))


@st.composite
def census(draw: st.DrawFn) -> list[PoolPair]:
    """A pool of one to three topics, every pair judged by the people (π = 1)."""
    pairs = []
    for qid in ("q1", "q2", "q3")[: draw(st.integers(1, 3))]:
        for i in range(draw(st.integers(1, 12))):
            judge = draw(grades)
            human = draw(st.integers(0, 3))
            pairs.append(PoolPair(qid, f"d{i}", judge, human, 1.0))
    return pairs


@st.composite
def sampled_pools(draw: st.DrawFn) -> list[PoolPair]:
    """A pool whose pairs are sampled with arbitrary π (at least one per topic)."""
    pairs = []
    for qid in ("q1", "q2", "q3")[: draw(st.integers(1, 3))]:
        size = draw(st.integers(1, 15))
        for i in range(size):
            pi = draw(st.floats(0.05, 1.0))
            chosen = pi == 1.0 or i == 0 or draw(st.booleans())
            human = draw(st.integers(0, 3)) if chosen else None
            pairs.append(PoolPair(qid, f"d{i}", draw(grades), human, pi))
    return pairs


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, abs=1e-9)


def _estimates(audit: JudgeAudit) -> list[tuple[Estimate, float, float]]:
    """Every estimate of an audit with its domain."""
    out = [
        (audit.kappa, -1.0, 1.0),
        (audit.precision, 0.0, 1.0),
        (audit.recall, 0.0, 1.0),
        (audit.people_r, 0.0, math.inf),
        (audit.count_ratio, 0.0, math.inf),
    ]
    out += [(e, 0.0, 1.0) for e in audit.p_relevant_by_grade.values()]
    for t in audit.topics:
        out += [
            (t.kappa, -1.0, 1.0),
            (t.precision, 0.0, 1.0),
            (t.recall, 0.0, 1.0),
            (t.count_ratio, 0.0, math.inf),
            (t.r_with_judge, 0.0, t.pool_size),
            (t.r_without_judge, 0.0, t.pool_size),
        ]
    return out


@settings(max_examples=150, deadline=None)
@given(census())
def test_a_census_gives_the_exact_figures_with_no_width(pairs: list[PoolPair]) -> None:
    audit = audit_judge(pairs, relevance_level=LEVEL)
    truth = brute_force(pairs)
    for name in ("kappa", "precision", "recall", "count_ratio"):
        assert _same(getattr(audit, name).value, truth[name]), name
    assert audit.people_r.value == pytest.approx(truth["R"])
    assert audit.judge_count == truth["judge_count"]
    for topic in audit.topics:
        own = brute_force([p for p in pairs if p.qid == topic.qid])
        assert topic.r_with_judge.value == pytest.approx(own["R"])
        assert topic.r_without_judge.value == pytest.approx(own["R"])
        assert _same(topic.kappa.value, own["kappa"])
    for estimate, _, _ in _estimates(audit):
        if math.isfinite(estimate.value):
            assert estimate.low == pytest.approx(estimate.value)
            assert estimate.high == pytest.approx(estimate.value)


@settings(max_examples=150, deadline=None)
@given(sampled_pools())
def test_every_interval_holds_its_value_inside_its_domain(
    pairs: list[PoolPair],
) -> None:
    audit = audit_judge(pairs, relevance_level=LEVEL)
    for estimate, low, high in _estimates(audit):
        if math.isnan(estimate.value):
            assert math.isnan(estimate.low)
            continue
        assert low <= estimate.low <= estimate.value <= estimate.high <= high


def _synthetic_pool(rng: random.Random) -> list[tuple[str, str, int, int]]:
    """Three topics of 60 pairs; the judge agrees with the people 70% of the time."""
    rows = []
    for t, prevalence in enumerate((0.15, 0.3, 0.5)):
        for i in range(60):
            human = 3 if rng.random() < prevalence else rng.choice((0, 1))
            agree = rng.random() < 0.7
            judge = (human >= LEVEL) == agree
            rows.append((f"q{t}", f"d{i}", 2 if judge else 0, human))
    return rows


def test_the_estimators_are_close_to_unbiased_over_repeated_samples() -> None:
    rng = random.Random(7)
    rows = _synthetic_pool(rng)
    full = [PoolPair(q, d, j, h, 1.0) for q, d, j, h in rows]
    truth = brute_force(full)
    sums = dict.fromkeys(("kappa", "precision", "recall", "with", "without"), 0.0)
    covered = 0
    draws = 400
    for _ in range(draws):
        pairs = []
        for qid in ("q0", "q1", "q2"):
            docs = [d for q, d, _, _ in rows if q == qid]
            sample = draw_uniform(docs, 15, rng)
            chosen = set(sample.order)
            pairs += [
                PoolPair(q, d, j, h if d in chosen else None, sample.inclusion[d])
                for q, d, j, h in rows
                if q == qid
            ]
        audit = audit_judge(pairs, relevance_level=LEVEL)
        for name in ("kappa", "precision", "recall"):
            sums[name] += getattr(audit, name).value
        sums["with"] += sum(t.r_with_judge.value for t in audit.topics)
        sums["without"] += sum(t.r_without_judge.value for t in audit.topics)
        covered += audit.kappa.covers(truth["kappa"])
    for name in ("kappa", "precision", "recall"):
        assert sums[name] / draws == pytest.approx(truth[name], abs=0.02), name
    # R: HT is exactly unbiased under the uniform design; the difference estimator
    # is too for a fixed slope (here estimated, so close).
    assert sums["without"] / draws == pytest.approx(truth["R"], rel=0.02)
    assert sums["with"] / draws == pytest.approx(truth["R"], rel=0.02)
    assert covered / draws >= 0.9


def test_a_judge_that_grades_everything_alike_leaves_r_as_ht_gives_it() -> None:
    rng = random.Random(3)
    docs = [f"d{i}" for i in range(40)]
    sample = draw_uniform(docs, 10, rng)
    pairs = [
        PoolPair("q1", d, 1, rng.choice((0, 3)) if d in sample.order else None, 0.25)
        for d in docs
    ]
    audit = audit_judge(pairs, relevance_level=LEVEL)
    (topic,) = audit.topics
    assert topic.r_with_judge == topic.r_without_judge
    assert audit.width_ratio == pytest.approx(1.0)
    assert audit.worth_judgments == pytest.approx(0.0)


def test_scores_are_binned_by_quantiles_and_few_grades_kept_as_they_are() -> None:
    rng = random.Random(5)
    scores = [
        PoolPair("q1", f"d{i}", rng.random(), rng.choice((0, 3)), 1.0)
        for i in range(100)
    ]
    audit = audit_judge(scores, relevance_level=LEVEL, judge_relevance_level=0.5)
    assert 2 <= len(audit.p_relevant_by_grade) <= GRADE_BINS
    assert min(audit.p_relevant_by_grade) == min(p.judge_grade for p in scores)
    few = [PoolPair("q1", f"d{i}", i % 3 * 0.5, i % 4, 1.0) for i in range(30)]
    keys = audit_judge(few, relevance_level=LEVEL).p_relevant_by_grade
    assert sorted(keys) == [0.0, 0.5, 1.0]
    # grade 0.0: d0, d3, ..., d27; people relevant (i % 4 >= 2) on 5 of those 10.
    assert keys[0.0].value == pytest.approx(0.5)


def test_disagreements_are_sampled_pairs_decided_differently() -> None:
    pairs = [
        PoolPair("q1", "a", 3, 0, 0.5),
        PoolPair("q1", "b", 2, 1, 0.5),
        PoolPair("q1", "c", 0, 3, 0.25),
        PoolPair("q1", "d", 3, 3, 0.5),
        PoolPair("q1", "e", 3, None, 0.5),
        PoolPair("q1", "f", None, 2, 0.5),
    ]
    found = audit_judge(pairs, relevance_level=LEVEL).disagreements
    assert [row[:4] for row in found] == [
        ("q1", "c", 0, 3),
        ("q1", "a", 3, 0),
        ("q1", "f", None, 2),
        ("q1", "b", 2, 1),
    ]
    assert found[0][4] == pytest.approx(4.0)


def test_the_summary_says_the_count_ratio_and_the_worth() -> None:
    rows = _synthetic_pool(random.Random(11))
    pairs = [
        PoolPair(q, d, j, h if i % 4 == 0 else None, 0.25)
        for i, (q, d, j, h) in enumerate(rows)
    ]
    text = audit_judge(pairs, relevance_level=LEVEL).summary()
    assert "times as many documents relevant as your assessors" in text
    assert "people's judgments per topic" in text


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ([], "no pooled pairs"),
        ([PoolPair("q1", "d1", 1, None, 1.0)], "q1 d1 is judged with certainty"),
        ([PoolPair("q1", "d1", 1, 2, 0.0)], "q1 d1 has inclusion probability 0.0"),
        ([PoolPair("q1", "d1", 1, 2, 1.0)] * 2, "q1 d1 is given twice"),
        ([PoolPair("q1", "d1", 1, None, 0.5)], "no pooled pair has a people's grade"),
    ],
)
def test_it_refuses_pairs_it_cannot_audit(pairs: list[PoolPair], message: str) -> None:
    with pytest.raises(JudgeAuditError, match=message):
        audit_judge(pairs, relevance_level=LEVEL)


def _one_topic_sample(seed: int, size: int = 100, n: int = 20) -> list[PoolPair]:
    rng = random.Random(seed)
    rows = [
        (f"d{i}", 3 if rng.random() < 0.3 else 0, rng.random()) for i in range(size)
    ]
    sample = draw_uniform([d for d, _, _ in rows], n, rng)
    return [
        PoolPair(
            "q1",
            d,
            2 if (human >= LEVEL) == (u < 0.8) else 0,
            human if d in sample.order else None,
            sample.inclusion[d],
        )
        for d, human, u in rows
    ]


def test_a_plan_for_the_half_width_a_sample_has_keeps_its_size() -> None:
    audit = audit_judge(_one_topic_sample(1), relevance_level=LEVEL)
    (topic,) = audit.topics
    half = 1.959963984540054 * math.sqrt(topic.r_var_without)
    plan = plan_sample_size(audit, half_width=half)
    assert plan.topics[0].without_judge == 20
    assert plan.topics[0].with_judge <= 20
    assert plan.judged == 20


def test_a_plan_follows_the_uniform_designs_variance() -> None:
    # V = N²(1/n - 1/N) S²: halving the interval's half-width needs V/4, i.e.
    # 1/n' = (1/n - 1/N)/4 + 1/N; with n = 20 of N = 100: n' = 1/(0.01 + 0.01) = 50.
    audit = audit_judge(_one_topic_sample(2), relevance_level=LEVEL)
    (topic,) = audit.topics
    half = 1.959963984540054 * math.sqrt(topic.r_var_without) / 2
    assert plan_sample_size(audit, half_width=half).without_judge == 50
    tight = plan_sample_size(audit, half_width=half / 100)
    assert tight.without_judge == 100
    assert tight.with_judge == 100


def test_a_plan_asks_less_with_a_judge_that_helps_and_refuses_a_zero_width() -> None:
    audit = audit_judge(_one_topic_sample(3), relevance_level=LEVEL)
    plan = plan_sample_size(audit, half_width=0.25, relative=True)
    (topic,) = audit.topics
    assert topic.r_var_with < topic.r_var_without
    assert plan.with_judge < plan.without_judge
    with pytest.raises(JudgeAuditError, match="half-width must be > 0"):
        plan_sample_size(audit, half_width=0.0)


def test_a_precision_of_zero_seen_on_few_pairs_keeps_an_interval() -> None:
    # 4 of the 10 sampled pairs (π = 1/4) are judge-relevant, none people-relevant:
    # the linearised variance is 0, Wilson's at n* = 4/(1 - 1/4) is not.
    pairs = [
        PoolPair("q1", f"d{i}", 3 if i < 4 else 0, 0 if i < 10 else None, 0.25)
        for i in range(40)
    ]
    precision = audit_judge(pairs, relevance_level=LEVEL).precision
    n = 4 / 0.75
    z2 = 1.959963984540054**2
    assert precision.value == 0.0
    assert precision.low == 0.0
    assert precision.high == pytest.approx(z2 / (n + z2))


@pytest.mark.parametrize(("k", "n"), [(1, 20), (7, 20), (30, 200)])
def test_the_proportion_interval_is_wilsons_at_the_effective_size(
    k: int, n: int
) -> None:
    p = k / n
    expected = wilson_interval(k, n)
    low, high = proportion_interval(p, p * (1 - p) / n, math.inf, math.inf)
    assert (low, high) == pytest.approx((expected.low, expected.high))


def test_the_degrees_of_freedom_count_the_pairs_that_carry_the_variance() -> None:
    assert effective_df(np.full(12, 0.3)) == pytest.approx(12)
    assert effective_df(np.array([1.0, 0.0, 0.0])) == pytest.approx(1)
    assert effective_df(np.zeros(3)) == math.inf


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.5, 100.0), min_size=4, max_size=4))
def test_kappas_gradient_is_its_derivative(cells: list[float]) -> None:
    t = np.array(cells)
    step = 1e-6
    for k in range(4):
        up, down = t.copy(), t.copy()
        up[k] += step
        down[k] -= step
        numeric = (kappa(up) - kappa(down)) / (2 * step)
        assert kappa_grad(t)[k] == pytest.approx(numeric, rel=1e-4, abs=1e-7)


def test_kappa_on_an_empty_cell_spans_the_kappas_of_precisions_interval() -> None:
    # Sampled (π = 1/4): 4 judge-only, 3 people-only, 3 neither; none relevant to both.
    human = [0] * 4 + [3] * 3 + [0] * 3
    pairs = [
        PoolPair("q1", f"d{i}", 3 if i < 4 else 0, human[i] if i < 10 else None, 0.25)
        for i in range(40)
    ]
    audit = audit_judge(pairs, relevance_level=LEVEL)
    n, judge, people = 40.0, 16.0, 12.0  # the HT table's margins
    top = audit.precision.high
    expected = 2 * (top * judge * n - judge * people)
    expected /= judge * (n - people) + (n - judge) * people
    assert audit.kappa.value == pytest.approx(brute_force_table(0, 16, 12, 12))
    assert audit.kappa.high == pytest.approx(expected)
    assert audit.kappa.low <= audit.kappa.value


def brute_force_table(a: float, b: float, c: float, d: float) -> float:
    n = a + b + c + d
    po = (a + d) / n
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / (n * n)
    return (po - pe) / (1 - pe)
