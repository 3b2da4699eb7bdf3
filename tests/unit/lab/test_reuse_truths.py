"""The reusability report's ceiling against a brute-force AP: a judge of the pool and
the run's own list down to the depth, and of nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.services.simulation_reuse import _reachable_map, _relevant_within
from nuggets_app.ir.measures import average_precision
from nuggets_app.ir.prels import ranking_order

DOCS = [f"d{i}" for i in range(12)]
TOPICS = ["1", "2", "3"]


@st.composite
def worlds(draw):
    """Qrels with at least one relevant document per topic, a run with distinct
    scores over some documents, a pool per topic and a depth."""
    qrels, run, pool = {}, {}, {}
    for qid in TOPICS:
        labels = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 1)))
        labels[draw(st.sampled_from(DOCS))] = 1
        qrels[qid] = labels
        retrieved = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1))
        run[qid] = {d: float(len(retrieved) - i) for i, d in enumerate(retrieved)}
        pool[qid] = draw(st.lists(st.sampled_from(DOCS), unique=True))
    return qrels, run, pool, draw(st.integers(1, 12))


@settings(max_examples=60, deadline=None)
@given(worlds())
def test_the_ceiling_is_ap_over_the_relevant_documents_a_judge_could_see(world):
    qrels, run, pool, depth = world
    expected = []
    for qid in TOPICS:
        order = ranking_order(run[qid])
        seen = set(pool[qid]) | set(order[:depth])
        relevant = {d for d, g in qrels[qid].items() if g and d in seen}
        expected.append(average_precision(order, relevant))
    assert _reachable_map(qrels, pool, run, depth) == pytest.approx(
        sum(expected) / len(expected)
    )


def test_relevant_documents_outside_count_as_non_relevant_and_topics_stay():
    qrels = {"1": {"a": 1, "b": 1, "c": 0}, "2": {"x": 1}}
    within = _relevant_within(qrels, {"1": ["a", "c"]})
    assert within == {"1": {"a": 1, "b": 0, "c": 0}, "2": {"x": 0}}
