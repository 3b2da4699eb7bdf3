"""How good a decision rule looks on the human-judged sample: confusion counts,
precision and recall per topic and overall.

Judged = ``Judgment`` rows with a grade for the topic and document; when several
assessors judged a document its human label is the collection's aggregation rule's
(:mod:`nuggets_app.judging.selectors.labels`; by default the highest grade); relevant means
grade >= the job's ``relevance_level``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import MatchJob, Topic


@dataclass
class RuleEstimate:
    """Confusion counts of a rule on the judged documents, and the ratios."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    inferred: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def judged(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def rule_estimate(
    *, job: MatchJob, rule: DecisionRule, topics: Iterable[Topic] | None = None
) -> dict[str, RuleEstimate]:
    """Per qid and overall (key ``"all"``): precision and recall of the rule measured
    on the judged documents among the job's results."""
    decisions = rule_apply(job=job, rule=rule, topics=topics)
    level = job.relevance_level
    judged: dict[int, list[tuple[int, int]]] = {}
    for (topic_id, doc_id), grade in human_grades(decisions).items():
        judged.setdefault(topic_id, []).append((doc_id, grade))
    qids = dict(Topic.objects.filter(pk__in=list(decisions)).values_list("pk", "qid"))
    out: dict[str, RuleEstimate] = {"all": RuleEstimate()}
    for topic_id, decided in sorted(decisions.items(), key=lambda kv: qids[kv[0]]):
        est = out.setdefault(qids[topic_id], RuleEstimate())
        inferred_here = sum(decided.values())
        for target in (est, out["all"]):
            target.inferred += inferred_here
        # Only the judged documents count in the confusion table: visit those, not
        # every result of the topic.
        for doc_id, grade in judged.get(topic_id, []):
            if doc_id not in decided:
                continue
            inferred = decided[doc_id]
            relevant = grade >= level
            attr = (
                ("tp" if inferred else "fn")
                if relevant
                else ("fp" if inferred else "tn")
            )
            for target in (est, out["all"]):
                setattr(target, attr, getattr(target, attr) + 1)
    return out
