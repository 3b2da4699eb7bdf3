"""A decision rule from its words: the one spec spelling (``p:X``, ``top:N``,
``fit:fB``...), a form's fields and a command's options, all built over
:class:`~nuggets_app.inference.services.decision_rule.DecisionRule`, which checks every
value, so a rule reads and is refused the same everywhere."""

from __future__ import annotations

from typing import Any

from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.inference.services.rule_fitting import rule_fit
from nuggets_app.learning.rule_spec import RULE_SPECS, RuleError, rule_spec_parse
from nuggets_app.models import MatchJob

# --- the rule's spellings: forms and command-line options ---------------------------
# Every form and command builds its rule fields from these, and its rule through
# rule_from_values (a form) / rule_from_options (a command), both over DecisionRule,
# which checks every value, so a rule reads and is refused the same everywhere.
DEFAULT_THRESHOLD = 0.5
DEFAULT_TOP_N = 100
# The form's choice that stands for each job's default rule (:func:`rule_default`).
DEFAULT_KIND = "default"
DEFAULT_CHOICE = (DEFAULT_KIND, "The job's default")
# What each choice does, in full (a form shows it beside the short label).
RULE_DESCRIPTIONS = {
    DEFAULT_KIND: "The job's default: p >= 0.5 with a fitted model, else the paper "
    "rule at 0.5.",
    "threshold": "The paper rule: the matcher's min-span score >= the threshold.",
    "probability": "The relevance model's probability p >= the threshold.",
    "expected_f1": "Per topic, p >= the threshold that maximises the expected F1 "
    "under the model's probabilities.",
    "top_n": "The N best documents of each topic (by p with a fitted model, else by "
    "score).",
}
# (kind, label) in the order a form lists them.
RULE_CHOICES = (
    ("threshold", "Paper rule: score >= threshold"),
    ("probability", "Model: p >= threshold"),
    ("expected_f1", "Model: best expected F1"),
    ("top_n", "Top N per topic"),
)
# The ways to give a rule as options, mutually exclusive: (name, argparse keywords);
# a command's flag is the name after two dashes.
RULE_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("threshold", {"type": float, "help": "inferred relevant: score >= X"}),
    ("top-n", {"type": int, "help": "inferred relevant: N best per topic"}),
    ("rule", {"metavar": "SPEC", "help": f"decision rule: {RULE_SPECS}"}),
    (
        "fit",
        {
            "metavar": "fB[:per-topic]",
            "help": "the same as the rule fit:fB[:per-topic]: score >= the threshold "
            "with the best F-beta on the job's held-out judged documents (e.g. f1, "
            "f1:per-topic, f0.5)",
        },
    ),
)


def rule_from_spec(text: str, *, job: MatchJob | None = None) -> DecisionRule:
    """A rule from its one spelling (:mod:`nuggets_app.learning.rule_spec`): ``p:X``,
    ``expected-f1``, ``top:N``, ``paper:X`` (``threshold:X`` too) and
    ``fit:fB[:per-topic]``, which is fitted on ``job``'s held-out judged documents
    (:func:`rule_fit`). RuleError (a ValueError) on a bad spelling or value."""
    spec = rule_spec_parse(text, default_threshold=DEFAULT_THRESHOLD)
    if spec.kind == "fit":
        if job is None:
            raise RuleError(f"rule {text.strip()!r}: a fitted rule needs a job")
        beta = spec.beta if spec.beta is not None else 1.0
        return rule_fit(
            job=job,
            objective="f1" if beta == 1.0 else "fbeta",
            beta=beta,
            scope=spec.scope,
        )
    if spec.kind == "top_n":
        return DecisionRule(kind="top_n", n=spec.n or 0)
    if spec.kind == "expected_f1":
        return DecisionRule(kind="expected_f1")
    return DecisionRule(
        kind=spec.kind,
        threshold=DEFAULT_THRESHOLD if spec.threshold is None else spec.threshold,
    )


def rule_from_values(
    kind: str, *, threshold: float | None = None, n: int | None = None
) -> DecisionRule:
    """A rule from a form's fields (threshold 0.5 and N 100 when left empty)."""
    if kind == "top_n":
        return DecisionRule(kind="top_n", n=DEFAULT_TOP_N if n is None else n)
    if kind == "expected_f1":
        return DecisionRule(kind="expected_f1")
    return DecisionRule(
        kind=kind, threshold=DEFAULT_THRESHOLD if threshold is None else threshold
    )


def rule_from_options(
    *,
    rule: str | None = None,
    top_n: int | None = None,
    threshold: float | None = None,
    fit: str | None = None,
    per_topic: dict[str, float] | None = None,
    job: MatchJob | None = None,
) -> DecisionRule:
    """The rule of the options of :data:`RULE_OPTIONS`: ``rule`` (a spec), ``fit``
    (``fB``, the same as the spec ``fit:fB``), ``top_n`` or ``threshold``, with a
    per-topic thresholds table beside a threshold (``per_topic``; without a
    threshold, topics missing from it infer nothing). With none of them, ``job``'s
    default rule (:func:`rule_default`), else the paper rule at 0.5."""
    if fit:
        if job is None:
            raise RuleError(
                "a fitted rule needs a matching job (it is fitted on the job's "
                "judgments)",
                field="job",
            )
        rule = f"fit:{fit}"
    if per_topic and (rule or top_n is not None):
        given = "a fitted rule" if fit else "a rule" if rule else "a top-N rule"
        raise RuleError(
            f"per-topic thresholds and {given} exclude each other",
            field="thresholds",
        )
    if rule:
        return rule_from_spec(rule, job=job)
    if top_n is not None:
        return DecisionRule(kind="top_n", n=top_n)
    if per_topic:
        if threshold is None:
            return DecisionRule(
                kind="threshold",
                threshold=DEFAULT_THRESHOLD,
                per_topic=per_topic,
                per_topic_only=True,
            )
        return DecisionRule(kind="threshold", threshold=threshold, per_topic=per_topic)
    if threshold is not None:
        return DecisionRule(kind="threshold", threshold=threshold)
    return rule_default(job) if job is not None else DecisionRule()
