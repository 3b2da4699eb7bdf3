"""The judge audit in words and in JSON: what each figure means (one sentence, shared
by the page and the command), and the shape the audit command writes as JSON."""

from __future__ import annotations

import math
from typing import Any

from nuggets_app.evaluation.services.judge_audits import (
    CollectionJudgeAudit,
    JudgeAuditEntry,
)
from nuggets_app.ir.judge_audit import Estimate, JudgeAudit

# What each figure says, in one sentence; every figure is the judge's against the
# people's sample, never a figure of the people alone.
MEANINGS = {
    "kappa": "Cohen's kappa of the judge's relevant/non-relevant call with the "
    "people's at the collection's level, over the pool, estimated from the sample: "
    "1 is full agreement, 0 agreement by chance alone.",
    "precision": "Of the pooled documents the judge calls relevant, the share the "
    "people call relevant.",
    "recall": "Of the pooled documents the people call relevant, the share the judge "
    "calls relevant too.",
    "count": "The judge's count of relevant pooled documents against the people's R "
    "estimated from the sample; a ratio above 1 means the judge calls more documents "
    "relevant than the people do.",
    "by_grade": "For each value the judge gives, the share of those pooled documents "
    "the people call relevant: how far each of the judge's grades can be trusted.",
    "topics": "Topics where the judge's count of relevant documents is furthest from "
    "the people's estimated R, most off first.",
    "disagreements": "Judged documents where the judge and the people disagree, the "
    "heaviest first (weight 1/π: how many pooled documents each stands for).",
    "interval": "Each bracket is a 95% interval: it covers the uncertainty of which "
    "documents the sample drew for the people to judge.",
}


def estimate_text(estimate: Estimate, digits: int = 3) -> str:
    """``0.412 [0.301, 0.523]`` (``n/a`` for a value that is not a number)."""
    if not math.isfinite(estimate.value):
        return "n/a"
    return (
        f"{estimate.value:.{digits}f} "
        f"[{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"
    )


def _estimate(estimate: Estimate) -> dict[str, float | None]:
    def number(value: float) -> float | None:
        return value if math.isfinite(value) else None

    return {
        "value": number(estimate.value),
        "low": number(estimate.low),
        "high": number(estimate.high),
    }


def _audit_dict(audit: JudgeAudit) -> dict[str, Any]:
    return {
        "summary": audit.summary(),
        "kappa": _estimate(audit.kappa),
        "precision": _estimate(audit.precision),
        "recall": _estimate(audit.recall),
        "judge_count": audit.judge_count,
        "people_r": _estimate(audit.people_r),
        "count_ratio": _estimate(audit.count_ratio),
        "p_relevant_by_grade": [
            {"judge_grade": grade, **_estimate(estimate)}
            for grade, estimate in sorted(audit.p_relevant_by_grade.items())
        ],
        "topics": [
            {
                "qid": topic.qid,
                "kappa": _estimate(topic.kappa),
                "precision": _estimate(topic.precision),
                "recall": _estimate(topic.recall),
                "judge_count": topic.judge_count,
                "people_r": _estimate(topic.people_r),
                "count_ratio": _estimate(topic.count_ratio),
                "r_with_judge": _estimate(topic.r_with_judge),
                "r_without_judge": _estimate(topic.r_without_judge),
            }
            for topic in audit.topics
        ],
        "disagreements": [
            {
                "qid": qid,
                "docno": docno,
                "judge_grade": judge_grade,
                "human_grade": human_grade,
                "weight": weight,
            }
            for qid, docno, judge_grade, human_grade, weight in audit.disagreements
        ],
        "width_ratio": audit.width_ratio,
        "worth_judgments": audit.worth_judgments,
    }


def _entry_dict(entry: JudgeAuditEntry) -> dict[str, Any]:
    judge = entry.judge
    return {
        "judge": judge.name,
        "kind": judge.kind,
        "model": judge.model,
        "prompt": judge.prompt,
        "date": judge.date.isoformat() if judge.date else None,
        "values": entry.what,
        "judge_relevant_from": entry.judge_level,
        "labels": entry.labels,
        "labels_beyond_pool": entry.beyond_pool,
        **_audit_dict(entry.audit),
    }


def audit_json(report: CollectionJudgeAudit) -> dict[str, Any]:
    """The audit as the command writes it in JSON (figures as value, low, high;
    ``null`` where a figure is not a number)."""
    return {
        "collection": report.collection.name,
        "sample": report.sample.name,
        "relevance_level": report.relevance_level,
        "meanings": MEANINGS,
        "judges": [_entry_dict(entry) for entry in report.entries],
    }


def audit_lines(report: CollectionJudgeAudit, *, topics: int = 5) -> list[str]:
    """The audit as text lines for the terminal: per judge the summary, the figures
    with their intervals, and its ``topics`` most-off topics."""
    lines = [
        f"collection {report.collection.name}, people's sample {report.sample.name}, "
        f"relevant at grade >= {report.relevance_level}",
        MEANINGS["interval"],
    ]
    for entry in report.entries:
        audit = entry.audit
        lines += [
            "",
            f"judge {entry.judge.name} ({entry.what}; the judge's relevant from "
            f"{entry.judge_level:g}; {entry.labels} labels, {entry.beyond_pool} "
            "beyond the pool)",
            f"  {audit.summary()}",
            f"  judge's kappa     {estimate_text(audit.kappa)}",
            f"  judge's precision {estimate_text(audit.precision)}",
            f"  judge's recall    {estimate_text(audit.recall)}",
            f"  judge's count     {audit.judge_count} against the people's R "
            f"{estimate_text(audit.people_r, 1)}; ratio "
            f"{estimate_text(audit.count_ratio, 2)}",
        ]
        for grade, estimate in sorted(audit.p_relevant_by_grade.items()):
            lines.append(f"  P(relevant | judge {grade:g}) {estimate_text(estimate)}")
        for topic in audit.topics[:topics]:
            lines.append(
                f"  topic {topic.qid}: judge's count {topic.judge_count}, people's R "
                f"{estimate_text(topic.people_r, 1)}, kappa "
                f"{estimate_text(topic.kappa, 2)}"
            )
    return lines
