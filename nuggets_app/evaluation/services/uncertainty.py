"""Evaluation with uncertainty: expected measures of runs under a job's probabilities
(EAP, EP@10, EnDCG@10), side by side with statAP, and which runs rank most
differently under EAP and statMAP."""

from __future__ import annotations

import math
from collections.abc import Mapping

from nuggets_app.evaluation.services.diagnostics import Table
from nuggets_app.ir.expected import EXPECTED_MEASURES, ExpectedEvaluation, run_expected
from nuggets_app.ir.ranking import ranking_compare
from nuggets_app.ir.statap import StatapResult
from nuggets_app.models import Collection, JobTopicProbabilities, MatchJob

Scores = Mapping[str, Mapping[str, float]]


def model_jobs(collection: Collection) -> list[MatchJob]:
    """The collection's finished jobs with a fitted relevance model, newest first."""
    fitted = (
        JobTopicProbabilities.objects.filter(job__collection=collection)
        .values_list("job_id", flat=True)
        .distinct()
    )
    return list(
        MatchJob.objects.filter(pk__in=list(fitted), status=MatchJob.Status.DONE)
        .select_related("collection", "pool", "sample")
        .order_by("-pk")
    )


def runs_expected(
    *, runs: Mapping[str, Scores], probabilities: Mapping[str, Mapping[str, float]]
) -> dict[str, ExpectedEvaluation]:
    """Expected measures of every run."""
    return {
        name: run_expected(probabilities, scores, measures=EXPECTED_MEASURES)
        for name, scores in runs.items()
    }


def expected_table(
    results: Mapping[str, ExpectedEvaluation],
    statap: Mapping[str, StatapResult] | None = None,
) -> Table:
    """Per run: the expected measures, and with statAP its statMAP and 95% interval,
    the run's rank under each and the difference (largest moves first)."""
    names = sorted(results)
    eap = {n: results[n].mean["EAP"] for n in names}
    columns = ("run", *EXPECTED_MEASURES)
    if not statap:
        rows = [(n, *(results[n].mean[m] for m in EXPECTED_MEASURES)) for n in names]
        return Table("expected", columns, rows)
    stat_map = {n: statap[n].summary.stat_map for n in names if n in statap}
    comparison = ranking_compare(stat_map, {n: eap[n] for n in stat_map})
    rows = []
    for move in comparison.moves:
        low, high = statap[move.run].summary.ci95
        rows.append(
            (
                move.run,
                *(results[move.run].mean[m] for m in EXPECTED_MEASURES),
                move.score_a,
                low,
                high,
                move.rank_a,
                move.rank_b,
                move.delta,
            )
        )
    columns = (
        *columns,
        "statMAP",
        "ci_low",
        "ci_high",
        "rank_statMAP",
        "rank_EAP",
        "rank_change",
    )
    return Table("expected", columns, rows)


def expected_flags(table: Table, *, top: int = 3) -> list[str]:
    """The runs whose rank differs most between EAP and statMAP (a move of 0 is no
    flag)."""
    if "rank_change" not in table.columns:
        return []
    at = table.columns.index("rank_change")
    moved = [row for row in table.rows if row[at] and not math.isnan(row[at])]
    return [f"{row[0]} ({row[at]:+d})" for row in moved[:top]]
