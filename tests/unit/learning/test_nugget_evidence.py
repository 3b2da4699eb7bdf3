"""Nugget-level evidence: each nugget weighed by its precision and recurrence on the
judged documents, leave-one-out."""

from __future__ import annotations

import math

import pytest

from nuggets_app.learning.nugget_evidence import (
    nugget_evidence_features,
    nugget_record,
)

# Nugget a was cut from r1 and matches r1 (its source, never counted), r2 and n1;
# nugget b was cut from r2 and matches r1 and r3; nugget c has no source and matches
# n1 and n2 only.
SOURCES = {"a": "r1", "b": "r2", "c": None}
JUDGED = {"r1": True, "r2": True, "r3": True, "n1": False, "n2": False}
MINSPAN = {
    "r1": {"a": 1.0, "b": 0.5},
    "r2": {"a": 0.8, "b": 1.0},
    "r3": {"b": 0.6},
    "n1": {"a": 0.4, "c": 1.0},
    "n2": {"c": 0.7},
}


def _record():
    return nugget_record(sources=SOURCES, judged=JUDGED, minspan=MINSPAN)


def test_each_nugget_counts_the_judged_documents_it_matches_but_its_source():
    record = _record()
    assert record.relevant == {"a": {"r2"}, "b": {"r1", "r3"}, "c": set()}
    assert record.nonrelevant == {"a": {"n1"}, "b": set(), "c": {"n1", "n2"}}


def test_an_unjudged_document_gets_the_noisy_or_of_calibrated_matches():
    # q_a = (1 + 1) / (2 + 2) = 1/2, q_b = (2 + 1) / (2 + 2) = 3/4, q_c = 1/4.
    noisy_or, recurrence = nugget_evidence_features(
        _record(), "u", {"a": 0.4, "b": 0.8, "c": 1.0}
    )
    miss = (1 - 0.5 * 0.4) * (1 - 0.75 * 0.8) * (1 - 0.25 * 1.0)
    assert noisy_or == pytest.approx(1 - miss)
    # Weights r_a = 1, r_b = 2, r_c = 0.
    assert recurrence == pytest.approx((1 * 0.4 + 2 * 0.8) / 3)


def test_a_judged_document_leaves_out_its_own_label_and_its_own_nuggets():
    # r2: nugget b is its own; a's counts without r2 are 0 relevant, 1 non-relevant.
    noisy_or, recurrence = nugget_evidence_features(_record(), "r2", MINSPAN["r2"])
    q_a = (0 + 1) / (1 + 2)
    assert noisy_or == pytest.approx(q_a * 0.8)
    # Only nuggets a and c count; neither matches a judged relevant document but r2.
    assert recurrence == 0.0
    # n1: a's precision without n1 is (1 + 1) / (1 + 2); c's (0 + 1) / (1 + 2).
    noisy_or, _ = nugget_evidence_features(_record(), "n1", MINSPAN["n1"])
    miss = (1 - 2 / 3 * 0.4) * (1 - 1 / 3 * 1.0)
    assert noisy_or == pytest.approx(1 - miss)


def test_a_document_no_nugget_matches_has_no_evidence():
    assert nugget_evidence_features(_record(), "u", {}) == (0.0, 0.0)
    assert nugget_evidence_features(_record(), "u", None) == (0.0, 0.0)
    noisy_or, _ = nugget_evidence_features(_record(), "u", {"a": 0.0})
    assert noisy_or == 0.0
    assert not math.isnan(noisy_or)
