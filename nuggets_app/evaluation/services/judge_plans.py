"""How many people's judgments each topic needs for a target 95% interval on R, with
and without each automatic judge: the one plan the audit page, ``audit_judges`` and
its JSON show.

Per topic, :func:`nuggets_app.ir.judge_audit.plan_sample_size` turns the variance the
audit estimated for R (the people's sample alone, and with each judge as auxiliary)
into the sample size whose interval reaches the half-width asked. The people's
variance does not depend on the judge; the column without a judge is the first
judge's plan of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nuggets_app.evaluation.services.judge_audits import CollectionJudgeAudit
from nuggets_app.ir.judge_audit import SamplePlan, plan_sample_size

# What the page and the command plan for unless asked otherwise: an interval on each
# topic's R of +/- 20% of its estimate.
DEFAULT_HALF_WIDTH = 0.2
DEFAULT_RELATIVE = True


@dataclass(frozen=True)
class PlanRow:
    """One topic (or the total): judged now, needed without a judge, with each."""

    qid: str
    judged: int
    without_judge: int
    with_judges: tuple[int, ...]


@dataclass(frozen=True)
class JudgePlan:
    half_width: float
    relative: bool
    judges: tuple[str, ...]
    rows: tuple[PlanRow, ...]
    total: PlanRow

    @property
    def target_text(self) -> str:
        """``+/- 20% of R`` or ``+/- 5 documents``."""
        if self.relative:
            return f"+/- {self.half_width * 100:g}% of R"
        return f"+/- {self.half_width:g} relevant documents"


def judge_plan_build(
    *,
    report: CollectionJudgeAudit,
    half_width: float = DEFAULT_HALF_WIDTH,
    relative: bool = DEFAULT_RELATIVE,
) -> JudgePlan:
    """The people's judgments needed per topic and in all for a 95% interval on R of
    ``half_width`` (``relative``: that fraction of the topic's R̂), without a judge
    and with each audited judge. Raises the audit's error for a half-width <= 0."""
    plans: list[SamplePlan] = [
        plan_sample_size(entry.audit, half_width=half_width, relative=relative)
        for entry in report.entries
    ]
    judges = tuple(entry.judge.name for entry in report.entries)
    rows = []
    if plans:
        by_judge = [{t.qid: t for t in plan.topics} for plan in plans]
        for first in plans[0].topics:
            rows.append(
                PlanRow(
                    qid=first.qid,
                    judged=first.judged,
                    without_judge=first.without_judge,
                    with_judges=tuple(
                        topics[first.qid].with_judge
                        if first.qid in topics
                        else first.without_judge
                        for topics in by_judge
                    ),
                )
            )
    total = PlanRow(
        qid="all",
        judged=sum(r.judged for r in rows),
        without_judge=sum(r.without_judge for r in rows),
        with_judges=tuple(
            sum(r.with_judges[i] for r in rows) for i in range(len(judges))
        ),
    )
    return JudgePlan(half_width, relative, judges, tuple(rows), total)


def plan_json(plan: JudgePlan) -> dict[str, Any]:
    """The plan as the audit's JSON holds it."""

    def row(r: PlanRow) -> dict[str, Any]:
        return {
            "qid": r.qid,
            "judged": r.judged,
            "needed_without_judge": r.without_judge,
            "needed_with_judge": dict(zip(plan.judges, r.with_judges, strict=True)),
        }

    return {
        "half_width": plan.half_width,
        "relative": plan.relative,
        "topics": [row(r) for r in plan.rows],
        "total": row(plan.total),
    }


def plan_lines(plan: JudgePlan) -> list[str]:
    """The plan as text lines: the totals, then one line per topic."""
    header = "  ".join(f"with {name}" for name in plan.judges)
    lines = [
        f"people's judgments needed for a 95% interval on R of {plan.target_text}",
        f"  topic  judged  without judge  {header}",
    ]
    for r in (*plan.rows, plan.total):
        withs = "  ".join(str(n) for n in r.with_judges)
        lines.append(f"  {r.qid}  {r.judged}  {r.without_judge}  {withs}")
    return lines
