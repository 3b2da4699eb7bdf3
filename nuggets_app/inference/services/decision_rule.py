"""The decision rule: which matched documents are inferred relevant, as one immutable
value (:class:`DecisionRule`) that checks its own values.

Its spellings (a spec, a form's fields, a command's options) are
:mod:`nuggets_app.inference.services.rule_grammar`; what it decides,
:mod:`nuggets_app.inference.services.rule_application`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nuggets_app.learning.rule_spec import RuleError, threshold_check, top_n_check

RULE_KINDS = ("threshold", "top_n", "probability", "expected_f1")
# Rules on the model's probability of relevance (the job needs a fitted model).
MODEL_RULES = ("probability", "expected_f1")


@dataclass(frozen=True)
class DecisionRule:
    """Which matched documents are inferred relevant.

    ``threshold`` (the paper rule): min-span score >= the topic's threshold
    (``per_topic`` by qid, else the global ``threshold``); ``top_n``: the ``n`` best
    documents of each topic (by the model's probability when the job has a fitted
    model, else by score, with a positive score; ties broken by document id);
    ``probability``: the model's p >= ``threshold`` (default 0.5); ``expected_f1``:
    p >= the topic's threshold that maximises the expected F1 under the model's
    probabilities.

    Rules on the score need nuggets: under ``threshold`` and score-ranked ``top_n`` a
    topic without nuggets cannot be decided (:func:`rule_undecided`); exports and
    verification leave its unjudged documents out, never a silent "all
    non-relevant". ``per_topic_only``: a topic missing from ``per_topic`` infers
    nothing (a thresholds file that names some topics only).

    Every value is checked here, whoever builds the rule (a command, a form, a
    download link, a fit): thresholds by :func:`threshold_check` (a probability in
    [0, 1], a min-span score within [0, 1]), N by :func:`top_n_check`; a bad one
    raises :class:`RuleError` with one sentence.
    """

    kind: str = "threshold"
    threshold: float = 0.5
    per_topic: dict[str, float] = field(default_factory=dict)
    n: int = 0
    per_topic_only: bool = False

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise RuleError(
                f"rule kind must be one of {', '.join(RULE_KINDS)}, got {self.kind!r}"
            )
        if self.kind == "top_n":
            top_n_check(self.n)
        threshold_check(self.kind, self.threshold)
        for qid, value in self.per_topic.items():
            try:
                threshold_check(self.kind, value)
            except RuleError as exc:
                raise RuleError(f"topic {qid}: {exc}") from None

    @property
    def uses_model(self) -> bool:
        """Whether the rule reads the model's probabilities (always for p rules)."""
        return self.kind in MODEL_RULES

    def as_dict(self) -> dict[str, Any]:
        """The rule as plain JSON (for provenance sidecars)."""
        if self.kind == "top_n":
            return {"kind": "top_n", "n": self.n}
        if self.kind == "expected_f1":
            return {"kind": "expected_f1"}
        if self.kind == "probability":
            return {"kind": "probability", "threshold": self.threshold}
        out: dict[str, Any] = {
            "kind": "threshold",
            "threshold": self.threshold,
            "per_topic": self.per_topic,
        }
        if self.per_topic_only:
            out["other_topics"] = "nothing inferred"
        return out

    def describe(self) -> str:
        """A short human label."""
        if self.kind == "top_n":
            return f"top {self.n} per topic"
        if self.kind == "probability":
            return f"p >= {self.threshold:g}"
        if self.kind == "expected_f1":
            return "p >= the threshold of best expected F1"
        if self.per_topic_only:
            return (
                f"paper rule: score >= the thresholds of {len(self.per_topic)} "
                "topics (nothing inferred for the others)"
            )
        extra = f", {len(self.per_topic)} per-topic" if self.per_topic else ""
        return f"paper rule: score >= {self.threshold:g}{extra}"
