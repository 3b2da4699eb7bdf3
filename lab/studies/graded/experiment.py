"""Graded inference against the full graded qrels: system rankings by nDCG@10 and nDCG.

For one finished simulation job (run right after ``manage.py simulate``, while the
database holds that simulation's judgments), the runs are scored with ir_measures under
(a) the judged sample alone, (b) sample + grades inferred from the nuggets a document
matches, (c) sample + the ordinal model's median grades, with the expected nDCG under
(d) the ordinal model's expected gains, and with (e) the statAP-style estimate of nDCG
from the sample and its inclusion probabilities
(``nuggets_app.ir.graded.stat_ndcg``); each ranking of the runs is compared with
the full graded qrels' by Kendall's tau. Only the job's topics (those with nuggets)
are scored, under every qrels, the full ones included.

Usage (from the repository root, DATA_DIR naming the simulation's database):
  python -m lab.studies.graded.experiment --job N --seed S --qrels FULL_QRELS
         --runs DIR --out OUT.json
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import ir_measures
from ir_measures import nDCG

from lab.studies.system_rankings import (
    Run,
    read_runs,
    taus_against_full,
    write_report,
)
from nuggets_app.inference.services.exports import Export
from nuggets_app.inference.services.graded import graded_export
from nuggets_app.ir.expected import expected_ndcg
from nuggets_app.ir.graded import stat_ndcg
from nuggets_app.models import Judgment, MatchJob, SampleDocument, Topic

MEASURES = [nDCG @ 10, nDCG]
TopicData = TypeVar("TopicData")


def scored(run: dict[str, dict[str, float]]) -> list:
    return [
        ir_measures.ScoredDoc(q, d, s)
        for q, docs in run.items()
        for d, s in docs.items()
    ]


def mean_measures(qrels: list, run: dict[str, dict[str, float]]) -> dict[str, float]:
    values = ir_measures.calc_aggregate(MEASURES, qrels, scored(run))
    return {str(m): float(v) for m, v in values.items()}


def ranking(run: dict[str, float]) -> list[str]:
    return [d for _, d in sorted(((s, d) for d, s in run.items()), reverse=True)]


def mean_ndcgs(
    runs: dict[str, Run],
    per_topic: dict[str, TopicData],
    estimate: Callable[[list[str], TopicData, int], float],
) -> dict[str, dict[str, float]]:
    """Each run's mean nDCG@10 and nDCG by ``estimate`` over the topics of
    ``per_topic``; a NaN estimate (no positive gain for the topic) is left out."""
    means: dict[str, dict[str, float]] = {}
    for run_name, run in runs.items():
        values: dict[str, list[float]] = {"nDCG@10": [], "nDCG": []}
        for qid in sorted(per_topic):
            order = ranking(run.get(qid, {}))
            for label, k in (("nDCG@10", 10), ("nDCG", max(len(order), 1))):
                v = estimate(order, per_topic[qid], k)
                if v == v:  # NaN
                    values[label].append(v)
        means[run_name] = {m: sum(v) / len(v) if v else 0.0 for m, v in values.items()}
    return means


def provenance(export: Export) -> dict[str, Any]:
    """The provenance of a graded export (every export of graded_export has one)."""
    if export.provenance is None:
        raise SystemExit("the graded export has no provenance")
    return export.provenance


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", type=int, required=True)
    parser.add_argument(
        "--seed", type=int, help="the sample's seed (default: from the job's name)"
    )
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    job = MatchJob.objects.get(pk=args.job)
    qids = set(Topic.objects.filter(match_jobs=job).values_list("qid", flat=True))
    truth = [
        q for q in ir_measures.read_trec_qrels(str(args.qrels)) if q.query_id in qids
    ]
    runs = read_runs(args.runs, qids)
    nuggets = provenance(graded_export(job=job, source="nuggets"))
    model = provenance(graded_export(job=job, source="model"))

    def qrels_of(lines: list[dict], person_only: bool = False) -> list:
        return [
            ir_measures.Qrel(r["qid"], r["docno"], int(r["rel"]))
            for r in lines
            if not person_only or r["source"] == "person"
        ]

    variants = {
        "full": truth,
        "sample": qrels_of(model["lines"], person_only=True),
        "sample+nuggets": qrels_of(nuggets["lines"]),
        "sample+model": qrels_of(model["lines"]),
    }
    gains: dict[str, dict[str, float]] = {}
    for r in model["lines"]:
        gains.setdefault(r["qid"], {})[r["docno"]] = float(r["expected_gain"])
    table: dict[str, dict[str, dict[str, float]]] = {}
    for name, qrels in variants.items():
        table[name] = {run: mean_measures(qrels, r) for run, r in runs.items()}
    table["expected (model)"] = mean_ndcgs(runs, gains, expected_ndcg)
    seed = args.seed if args.seed is not None else int(job.name.rsplit(" ", 1)[1])
    if job.pool is None:
        raise SystemExit(f"job {job.pk} is not over a pool")
    sample = job.pool.samples.get(name__endswith=f"-seed{seed}")
    inclusion = {
        (q, d): p
        for q, d, p in SampleDocument.objects.filter(sample=sample).values_list(
            "topic__qid", "document__docno", "inclusion_prob"
        )
    }
    judged: dict[str, dict[str, tuple[int, float]]] = {}
    for q, d, g in Judgment.objects.filter(
        topic__qid__in=qids, topic__collection=job.collection
    ).values_list("topic__qid", "document__docno", "relevance"):
        if (q, d) in inclusion and g is not None:
            judged.setdefault(q, {})[d] = (g, inclusion[(q, d)])
    table["statAP-style (sample)"] = mean_ndcgs(runs, judged, stat_ndcg)
    names = sorted(runs)
    tau = taus_against_full(table, names, ["nDCG@10", "nDCG"])
    counts = {
        "topics": len(qids),
        "runs": len(names),
        "judged": model["counts"]["person"],
        "lines": model["counts"]["lines"],
        "model_by_grade": model["counts"]["by_grade"],
        "nuggets_by_grade": nuggets["counts"]["by_grade"],
        "full_by_grade": {
            str(g): sum(q.relevance == g for q in truth)
            for g in sorted({q.relevance for q in truth})
        },
    }
    write_report(
        args.out, {"job": job.pk, "counts": counts, "tau": tau, "means": table}, tau
    )


if __name__ == "__main__":
    main()
