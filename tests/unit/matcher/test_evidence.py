"""Evidence: lambda-free, stored as plain JSON, re-scored without the text."""

import json

import pytest

from matcher import (
    Evidence,
    MatcherError,
    NuggetSpec,
    TopicMatcher,
    rescore,
    rescore_json,
)

N1_TEXT = "John Kennedy was elected president in 1960"
D2_TEXT = "Nixon lost the 1960 election; Kennedy won the presidency"


@pytest.fixture
def matcher():
    return TopicMatcher([NuggetSpec("N2", "Bora Bora"), NuggetSpec("N1", N1_TEXT)])


def test_evidence_round_trips_through_json_text(matcher):
    match = matcher.score(D2_TEXT)
    stored = json.loads(json.dumps(match.evidence.to_json()))
    assert stored == {"N1": [None, 4, 5]}
    assert matcher.evidence_from_json(stored) == match.evidence
    assert matcher.shingle_sizes == {"N2": (2,), "N1": (3, 3, 3)}


def test_rescoring_uses_the_specified_formula(matcher):
    evidence = matcher.score(D2_TEXT).evidence
    expected = (0.25 ** (1 / 3) + 0.25 ** (2 / 3)) / 3
    assert rescore(evidence, 0.25) == (pytest.approx(expected, abs=1e-12), "N1")
    assert rescore_json({"N1": [None, 4, 5]}, matcher.shingle_sizes, 0.25)[
        0
    ] == pytest.approx(expected, abs=1e-12)
    assert rescore(Evidence(), 0.5) == (0.0, None)


def test_ties_follow_nugget_input_order_whatever_the_stored_key_order():
    matcher = TopicMatcher([NuggetSpec("b", "alpha"), NuggetSpec("a", "beta")])
    stored = {"a": [1], "b": [1]}
    assert matcher.rescorer(0.5)(stored) == (1.0, "b")
    assert rescore(matcher.evidence_from_json(stored), 0.5) == (1.0, "b")


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        ({"N9": [3]}, "unknown nugget 'N9'"),
        ({"N1": [3, 3]}, r"evidence\['N1'\]: must be a list of 3 window lengths"),
        ({"N1": [3, 2, None]}, r"window length 2 is not an integer >= 3"),
        ({"N1": [3, "4", None]}, r"window length '4' is not an integer >= 3"),
        ([1, 2], "evidence: must be a JSON object"),
    ],
)
def test_malformed_stored_evidence_is_refused(matcher, stored, message):
    with pytest.raises(MatcherError, match=message):
        matcher.evidence_from_json(stored)


def test_rescoring_refuses_a_bad_lambda(matcher):
    with pytest.raises(MatcherError, match=r"lam: must be in \(0, 1\]"):
        rescore(Evidence(), 0)
    with pytest.raises(MatcherError, match=r"lam: must be in \(0, 1\]"):
        matcher.rescorer(2.0)
