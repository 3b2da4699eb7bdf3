"""The one grammar of a decision rule and the one check of its values."""

from __future__ import annotations

import pytest

from lab.maths.simulation import rule_parse
from nuggets_app.errors import DomainError
from nuggets_app.learning.rule_spec import (
    RuleError,
    RuleSpec,
    rule_spec_parse,
    threshold_check,
    top_n_check,
)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("p:0.7", RuleSpec("probability", threshold=0.7)),
        ("p", RuleSpec("probability", threshold=0.5)),
        ("paper:0", RuleSpec("threshold", threshold=0.0)),
        ("threshold:1", RuleSpec("threshold", threshold=1.0)),
        ("expected-f1", RuleSpec("expected_f1")),
        ("top:20", RuleSpec("top_n", n=20)),
        ("fit:f1", RuleSpec("fit", beta=1.0)),
        ("fit:f0.5:per-topic", RuleSpec("fit", beta=0.5, scope="per-topic")),
    ],
)
def test_each_spelling_reads_as_its_rule(text, spec):
    assert rule_spec_parse(text) == spec


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("paper:-1", "a score threshold is within the min-span scores' range [0, 1]"),
        ("threshold:1.7", "a score threshold is within the min-span scores' range"),
        ("p:1.5", "a probability threshold is in [0, 1], got 1.5"),
        ("p:nan", "a probability threshold is in [0, 1], got nan"),
        ("top:0", "top N needs a whole number N >= 1, got 0"),
        ("top:2.5", "top N needs a whole number N >= 1, got 2.5"),
        ("top:x", "expected a number, got 'x'"),
        ("fit:g1", "expected fB or fB:per-topic"),
        ("best:3", "expected p:X, expected-f1, top:N, paper:X or fit:fB"),
        ("expected-f1:3", "expected p:X, expected-f1"),
    ],
)
def test_a_bad_spelling_or_value_is_one_sentence_naming_the_spec(text, sentence):
    with pytest.raises(RuleError) as refused:
        rule_spec_parse(text)
    message = str(refused.value)
    assert message.startswith(f"rule {text!r}: ")
    assert sentence in message


def test_the_checks_take_the_range_of_the_rules_kind():
    assert threshold_check("probability", 1) == 1.0
    assert threshold_check("threshold", 0) == 0.0
    for kind, value in (("probability", -0.1), ("threshold", 1.0001)):
        with pytest.raises(RuleError):
            threshold_check(kind, value)
    assert top_n_check(3) == 3
    for bad in (0, -2, 1.5, True, "3"):
        with pytest.raises(RuleError):
            top_n_check(bad)


def test_the_simulations_rules_are_the_products_grammar():
    assert rule_parse("paper:0.4") == ("threshold", 0.4)
    assert rule_parse("threshold:0.4") == ("threshold", 0.4)
    with pytest.raises(DomainError, match="the simulation takes threshold:X"):
        rule_parse("p:0.5")
    with pytest.raises(DomainError, match="a score threshold is within"):
        rule_parse("threshold:-1")
