"""Several assessors' grades of one document made one label, by a stated rule.

Django-free. The rules (``RULES``):

- ``highest``: the highest grade any assessor gave (one assessor finding the document
  relevant is enough; TREC's custom when a second assessor re-judges);
- ``majority``: the grade most assessors gave; a tie goes to the higher of the tied
  grades (``ties="higher"``) or the lower (``ties="lower"``);
- ``primary``: the named primary assessor's grade; where the primary did not judge
  the document, the ``fallback`` rule over the others' grades;
- ``adjudicated``: the adjudicator's decision where one exists; elsewhere the
  ``fallback`` rule (``highest``, ``majority`` or ``primary``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from nuggets_app.errors import DomainError

RULES = ("highest", "majority", "primary", "adjudicated")
TIES = ("higher", "lower")


class AggregationError(DomainError):
    """A rule that cannot be applied as stated; the message names the field."""


@dataclass(frozen=True)
class Aggregation:
    """A rule and its parameters (``primary``: a username; ``ties``: where a
    majority tie goes; ``fallback``: the rule for documents the primary did not
    judge or nobody adjudicated)."""

    rule: str = "highest"
    primary: str | None = None
    ties: str = "higher"
    fallback: str = "highest"

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise AggregationError(
                f"aggregation rule must be one of {', '.join(RULES)}, got {self.rule!r}"
            )
        if self.ties not in TIES:
            raise AggregationError(
                f"majority ties must go to one of {', '.join(TIES)}, got {self.ties!r}"
            )
        if self.fallback not in RULES[:3]:
            raise AggregationError(
                "the fallback rule must be one of highest, majority, primary, "
                f"got {self.fallback!r}"
            )
        needs_primary = self.rule == "primary" or (
            self.rule == "adjudicated" and self.fallback == "primary"
        )
        if needs_primary and not self.primary:
            raise AggregationError("the primary rule needs a primary assessor")

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> Aggregation:
        """From the stored JSON (``{}`` or None: ``highest``)."""
        data = data or {}
        primary = data.get("primary")
        return cls(
            rule=str(data.get("rule") or "highest"),
            primary=str(primary) if primary else None,
            ties=str(data.get("ties") or "higher"),
            fallback=str(data.get("fallback") or "highest"),
        )

    def as_dict(self) -> dict[str, object]:
        """The stored JSON, also the sidecars' ``aggregation``."""
        return {
            "rule": self.rule,
            "primary": self.primary,
            "ties": self.ties,
            "fallback": self.fallback,
            "text": self.describe(),
        }

    def describe(self) -> str:
        """One sentence naming the rule, as exports and estimates state it."""
        tie = f"ties to the {self.ties} grade"
        fallback = {
            "highest": "the highest grade",
            "majority": f"the majority grade ({tie})",
            "primary": f"{self.primary}'s grade, else the highest",
        }[self.fallback]
        return {
            "highest": "the highest grade any assessor gave",
            "majority": f"the grade most assessors gave ({tie})",
            "primary": f"{self.primary}'s grade; where {self.primary} did not judge, "
            f"{fallback}",
            "adjudicated": "the adjudicated grade; where nobody adjudicated, "
            f"{fallback}",
        }[self.rule]


def grade_combine(
    grades: Mapping[str, int], aggregation: Aggregation, adjudicated: int | None = None
) -> tuple[int, str]:
    """``(grade, how)`` for one document: ``grades`` maps assessor to grade (at
    least one unless ``adjudicated`` is given); ``how`` is the rule that decided
    (``adjudicated``, ``primary``, ``majority`` or ``highest``)."""
    rule = aggregation.rule
    if rule == "adjudicated":
        if adjudicated is not None:
            return adjudicated, "adjudicated"
        rule = aggregation.fallback
    if not grades:
        raise AggregationError("no grade to combine")
    if rule == "primary":
        primary = aggregation.primary
        if primary is not None and primary in grades:
            return grades[primary], "primary"
        rule = aggregation.fallback if aggregation.fallback != "primary" else "highest"
    if rule == "majority":
        counts = Counter(grades.values())
        top = max(counts.values())
        tied = [g for g, c in counts.items() if c == top]
        return (max(tied) if aggregation.ties == "higher" else min(tied)), "majority"
    return max(grades.values()), "highest"
