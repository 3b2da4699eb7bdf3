"""Two qrels compared: every run scored under A and under B, and how the rankings agree.

A mean over topics only compares with a mean over the same topics: a run's MAP under
qrels judging six topics and under qrels judging four of them differs by the two
topics as much as by the judgments. So both qrels are cut to the topics they both
judge before any run is scored; the topics left out are listed, and with no topic in
common there is no comparison (:class:`ComparisonError` says why). Kendall's tau,
tau_AP and each run's move come from those common-topic means. The page, its CSV and
``manage.py compare_qrels`` all call :func:`qrels_compare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.diagnostics import (
    Progress,
    QrelsDict,
    Scores,
    Table,
    runs_evaluate,
)
from nuggets_app.ir.prels import topic_key
from nuggets_app.ir.ranking import RankingComparison, ranking_compare


class ComparisonError(DomainError):
    """Two qrels that cannot be compared (no topic in common)."""


@dataclass(frozen=True)
class QrelsTopics:
    """The topics both qrels judge, and those only one of them judges (numeric order)."""

    common: tuple[str, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    def sentence(self) -> str:
        """What was compared, in words: the common topics, and every topic left out."""
        n = len(self.common)
        text = f"Compared on the {n} topic{'s' if n != 1 else ''} both qrels judge"
        if not (self.only_a or self.only_b):
            return f"{text} (all of them)."
        left = []
        if self.only_a:
            left.append(f"judged only in A: {', '.join(self.only_a)}")
        if self.only_b:
            left.append(f"judged only in B: {', '.join(self.only_b)}")
        return f"{text}; left out, {'; '.join(left)}."


def qrels_topics(
    qrels_a: Mapping[str, object], qrels_b: Mapping[str, object]
) -> QrelsTopics:
    """Split the topics of A and B into common and one-sided ones; with none in
    common, :class:`ComparisonError` names the topics of each."""
    a, b = {q for q in qrels_a if qrels_a[q]}, {q for q in qrels_b if qrels_b[q]}

    def ordered(qids: set[str]) -> tuple[str, ...]:
        return tuple(sorted(qids, key=topic_key))

    topics = QrelsTopics(ordered(a & b), ordered(a - b), ordered(b - a))
    if not topics.common:
        raise ComparisonError(
            "qrels A and B judge no topic in common (A: "
            f"{', '.join(topics.only_a) or 'none'}; B: "
            f"{', '.join(topics.only_b) or 'none'}), so their means are over "
            "different topics and the rankings cannot be compared"
        )
    return topics


@dataclass(frozen=True)
class QrelsComparison:
    """Per-run scores under qrels A and B, over the topics both judge, and how the
    rankings they induce agree."""

    measure: str
    scores_a: dict[str, float]
    scores_b: dict[str, float]
    ranking: RankingComparison
    topics: QrelsTopics

    def tables(self) -> tuple[Table, Table]:
        """A summary (topics compared, tau, tau_AP) and one row per run, the runs that
        move most first."""
        r = self.ranking
        summary = Table(
            "comparison_summary",
            ("measure", "topics", "runs", "kendall_tau", "tau_ap", "tau_ap_symmetric"),
            [
                (
                    self.measure,
                    len(self.topics.common),
                    r.runs,
                    r.kendall_tau,
                    r.tau_ap,
                    r.tau_ap_symmetric,
                )
            ],
        )
        moves = Table(
            "comparison",
            ("run", "score_a", "score_b", "rank_a", "rank_b", "delta"),
            [
                (m.run, m.score_a, m.score_b, m.rank_a, m.rank_b, m.delta)
                for m in r.moves
            ],
        )
        return summary, moves


def qrels_compare(
    *,
    runs: Mapping[str, Scores],
    qrels_a: QrelsDict,
    qrels_b: QrelsDict,
    measure: str = "AP",
    progress: Progress | None = None,
) -> QrelsComparison:
    """Score every run with ``measure`` (mean over the topics both qrels judge) under
    A and B, and compare; ``progress(evaluations done, 2 x runs)`` after each one."""
    topics = qrels_topics(qrels_a, qrels_b)
    common = set(topics.common)

    def cut(qrels: QrelsDict) -> QrelsDict:
        return {q: docs for q, docs in qrels.items() if q in common}

    def half(first: int) -> Progress | None:
        if progress is None:
            return None
        return lambda done, n: progress(first * n + done, 2 * n)

    a = runs_evaluate(
        runs=runs, qrels=cut(qrels_a), measures=[measure], progress=half(0)
    )
    b = runs_evaluate(
        runs=runs, qrels=cut(qrels_b), measures=[measure], progress=half(1)
    )
    scores_a = {n: next(iter(ev.mean.values()), math.nan) for n, ev in a.items()}
    scores_b = {n: next(iter(ev.mean.values()), math.nan) for n, ev in b.items()}
    return QrelsComparison(
        measure, scores_a, scores_b, ranking_compare(scores_a, scores_b), topics
    )
