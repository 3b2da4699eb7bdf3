"""AP linearised at the model's point: exact with p = y, and over every Poisson sample
its mean is AP plus the product of the model's errors (brute force over subsets)."""

from __future__ import annotations

import math
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.maths.ratio_linearised import ap_shifts, calibrations, linearised_ap
from nuggets_app.ir.estimator import PLAIN
from nuggets_app.ir.measures import average_precision
from nuggets_app.ir.model_assisted import topic_sample
from nuggets_app.ir.prels import TopicPrels

N_DOCS = 5


@st.composite
def topics(draw):
    """Labels (at least one relevant), π in (0, 1], p in [0, 1] with Σp > 0, and a
    ranking of a part of the pool."""
    labels = draw(st.lists(st.integers(0, 1), min_size=N_DOCS, max_size=N_DOCS))
    if not any(labels):
        labels[draw(st.integers(0, N_DOCS - 1))] = 1
    pis = draw(st.lists(st.floats(0.1, 1.0), min_size=N_DOCS, max_size=N_DOCS))
    ps = draw(st.lists(st.floats(0.0, 1.0), min_size=N_DOCS, max_size=N_DOCS))
    if sum(ps) < 0.05:
        ps[0] = 0.5
    order = draw(st.permutations(range(N_DOCS)))
    depth = draw(st.integers(1, N_DOCS))
    return labels, pis, ps, [f"d{i}" for i in order[:depth]]


def _sample(labels, pis, ps, drawn) -> object:
    topic = TopicPrels("1")
    for i in drawn:
        topic.rel[f"d{i}"] = labels[i]
        topic.inclusion_prob[f"d{i}"] = pis[i]
    probs = {f"d{i}": p for i, p in enumerate(ps)}
    return topic_sample(topic, probs, estimator=PLAIN)


def _truth(labels, ranking) -> tuple[float, float]:
    relevant = {f"d{i}" for i, y in enumerate(labels) if y}
    return average_precision(ranking, relevant), float(len(relevant))


@settings(max_examples=60, deadline=None)
@given(topics(), st.floats(0.25, 4.0))
def test_expectation_is_ap_plus_the_product_of_model_errors(topic, scale):
    """For any fixed R~ = scale R_p (a calibration from other topics is fixed given
    this topic's sample): E[AP_lin] = AP + (AP - AP_p)(R - R~)/R~."""
    labels, pis, ps, ranking = topic
    mean = 0.0
    for picked in product((0, 1), repeat=N_DOCS):
        weight = math.prod(
            pi if b else 1 - pi for pi, b in zip(pis, picked, strict=True)
        )
        if weight == 0:
            continue
        drawn = [i for i, b in enumerate(picked) if b]
        value, _ = linearised_ap(_sample(labels, pis, ps, drawn), ranking, scale=scale)
        mean += weight * value
    ap, r = _truth(labels, ranking)
    model = _sample([0] * N_DOCS, [1.0] * N_DOCS, ps, [])
    r_tilde = scale * sum(ps)
    ap_p, _ = linearised_ap(model, ranking)  # no residuals: the model's own AP
    assert math.isclose(mean, ap + (ap - ap_p) * (r - r_tilde) / r_tilde, abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(topics(), st.lists(st.booleans(), min_size=N_DOCS, max_size=N_DOCS))
def test_exact_when_p_is_the_label(topic, picked):
    labels, pis, _, ranking = topic
    drawn = [i for i, b in enumerate(picked) if b]
    value, var = linearised_ap(_sample(labels, pis, labels, drawn), ranking)
    ap, _ = _truth(labels, ranking)
    assert math.isclose(value, ap, abs_tol=1e-12)
    assert var == 0.0


def test_calibration_leaves_the_topic_out():
    a = _sample([1, 1, 0, 0, 0], [1.0] * N_DOCS, [0.5, 0.5, 0.0, 0.0, 0.0], [0, 1])
    b = _sample(
        [1, 1, 1, 1, 0], [1.0] * N_DOCS, [0.5, 0.5, 0.5, 0.5, 0.0], [0, 1, 2, 3]
    )
    scales = calibrations({"a": a, "b": b})
    assert math.isclose(scales["a"], 4 / 2)  # b: R̂ = 4, R_p = 2
    assert math.isclose(scales["b"], 2 / 1)  # a: R̂ = 2, R_p = 1


def test_ap_shift_leaves_the_topic_out():
    shifts = ap_shifts({"a": 0.5, "b": 0.3, "c": 0.1}, {"a": 0.2, "b": 0.3, "c": 0.4})
    assert shifts == pytest.approx({"a": -0.15, "b": 0.0, "c": 0.15})
    assert ap_shifts({"a": 0.5}, {"a": 0.1}) == {"a": 0.0}


def test_no_expansion_point_without_a_model():
    sample = _sample([1, 0, 1, 0, 0], [0.5] * N_DOCS, [0.0] * N_DOCS, [0, 1])
    assert linearised_ap(sample, ["d0", "d1"]) is None
