"""How well the people's sample audits an automatic judge, on a labels-only collection.

The pool is every pair of the people's qrels (``--human``); each ``*.qrels`` file of
``--judges`` grades the same pairs. Per seed, the people's sample of each topic is the
product's uniform design (:func:`nuggets_app.ir.sampling.draw_uniform`, exact π) of
``max(2, round(F N))`` of the topic's ``N`` pairs, one sample for all judges as a
deployment has one; :func:`nuggets_app.ir.judge_audit.audit_judge` (what the audit page
calls) then audits each judge from it. Reported per judge:

* ``truth``: kappa, precision, recall and count ratio from all pairs (brute force);
* ``coverage``: the share of seeds whose 95% interval of each covers its truth;
* ``r_rmse_with`` / ``r_rmse_without``: the RMSE over seeds and topics of each topic's
  R̂ with and without the judge against the people's count, and their ratio;
* ``r_coverage_with`` / ``r_coverage_without``: the share of (seed, topic) whose
  95% interval of R covers the people's count;
* ``width_ratio`` and ``worth_judgments``: their means over seeds.

Usage: python -m lab.studies.judge_audit --human QRELS --judges DIR --fraction F
       --seeds N [--relevance-level 2] --json OUT [--markdown]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nuggets_app.importers.qrels import parse_qrels
from nuggets_app.ir.judge_audit import JudgeAudit, PoolPair, audit_judge
from nuggets_app.ir.sampling import draw_uniform

Labels = dict[tuple[str, str], int]
FIGURES = ("kappa", "precision", "recall", "count_ratio")


def read_labels(path: Path) -> Labels:
    """``(qid, docno) -> grade`` of a TREC qrels file, through the product's parser."""
    return {(r.qid, r.docno): r.rel for r in parse_qrels(path, "qrels")}


def read_judges(folder: Path) -> dict[str, Labels]:
    return {
        p.name[: -len(".qrels")]: read_labels(p) for p in sorted(folder.glob("*.qrels"))
    }


def truth_figures(
    human: Labels, judge: Mapping[tuple[str, str], float], level: int
) -> dict[str, float]:
    """Kappa, precision, recall and count ratio over every pair, by counting."""
    a = b = c = d = 0
    for key, grade in human.items():
        y = grade >= level
        j = key in judge and judge[key] >= level
        a += j and y
        b += j and not y
        c += y and not j
        d += not (j or y)
    den = (a + b) * (b + d) + (a + c) * (c + d)
    return {
        "kappa": 2 * (a * d - b * c) / den if den else math.nan,
        "precision": a / (a + b) if a + b else math.nan,
        "recall": a / (a + c) if a + c else math.nan,
        "count_ratio": (a + b) / (a + c) if a + c else math.nan,
    }


def people_sample(
    human: Labels, fraction: float, seed: int
) -> dict[str, tuple[set[str], dict[str, float]]]:
    """Per topic, the sampled docnos and every pooled docno's π."""
    by_topic: dict[str, list[str]] = {}
    for qid, docno in human:
        by_topic.setdefault(qid, []).append(docno)
    rng = random.Random(seed)
    sample = {}
    for qid in sorted(by_topic):
        docs = by_topic[qid]
        n = max(2, round(fraction * len(docs)))
        draw = draw_uniform(docs, n, rng)
        sample[qid] = (set(draw.order), draw.inclusion)
    return sample


def pool_pairs(
    human: Labels,
    judge: Mapping[tuple[str, str], float],
    sample: Mapping[str, tuple[set[str], Mapping[str, float]]],
) -> list[PoolPair]:
    pairs = []
    for (qid, docno), grade in sorted(human.items()):
        chosen, inclusion = sample[qid]
        pairs.append(
            PoolPair(
                qid=qid,
                docno=docno,
                judge_grade=judge.get((qid, docno)),
                human_grade=grade if docno in chosen else None,
                inclusion_prob=inclusion[docno],
            )
        )
    return pairs


def _true_r(human: Labels, level: int) -> dict[str, int]:
    r: dict[str, int] = {}
    for (qid, _), grade in human.items():
        r[qid] = r.get(qid, 0) + (grade >= level)
    return r


def _rmse(errors: Sequence[float]) -> float:
    return math.sqrt(math.fsum(e * e for e in errors) / len(errors))


def judge_report(
    truth: Mapping[str, float], audits: Sequence[JudgeAudit], true_r: Mapping[str, int]
) -> dict[str, Any]:
    """One judge's figures over the seeds' audits."""
    coverage = {
        name: sum(getattr(a, name).covers(truth[name]) for a in audits) / len(audits)
        for name in FIGURES
    }
    with_err = [t.r_with_judge.value - true_r[t.qid] for a in audits for t in a.topics]
    without_err = [
        t.r_without_judge.value - true_r[t.qid] for a in audits for t in a.topics
    ]
    rmse_with, rmse_without = _rmse(with_err), _rmse(without_err)
    topics = [t for a in audits for t in a.topics]
    return {
        "truth": dict(truth),
        "coverage": coverage,
        "r_rmse_with": rmse_with,
        "r_rmse_without": rmse_without,
        "r_rmse_ratio": rmse_with / rmse_without if rmse_without else math.nan,
        "r_coverage_with": sum(t.r_with_judge.covers(true_r[t.qid]) for t in topics)
        / len(topics),
        "r_coverage_without": sum(
            t.r_without_judge.covers(true_r[t.qid]) for t in topics
        )
        / len(topics),
        "width_ratio": sum(a.width_ratio for a in audits) / len(audits),
        "worth_judgments": sum(a.worth_judgments for a in audits) / len(audits),
    }


def judge_audit_study(
    human: Labels,
    judges: Mapping[str, Labels],
    *,
    fraction: float,
    seeds: int,
    relevance_level: int = 2,
) -> dict[str, Any]:
    """The study's report (the module docstring)."""
    true_r = _true_r(human, relevance_level)
    samples = [people_sample(human, fraction, seed) for seed in range(seeds)]
    report: dict[str, Any] = {}
    for name, judge in judges.items():
        audits = [
            audit_judge(pool_pairs(human, judge, s), relevance_level=relevance_level)
            for s in samples
        ]
        truth = truth_figures(human, judge, relevance_level)
        report[name] = judge_report(truth, audits, true_r)
    return {
        "fraction": fraction,
        "seeds": seeds,
        "relevance_level": relevance_level,
        "pairs": len(human),
        "topics": len(true_r),
        "judges": report,
        "overall": _overall(report),
    }


def _overall(report: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    covers = [v for r in report.values() for v in r["coverage"].values()]
    ratios = [r["r_rmse_ratio"] for r in report.values()]
    return {
        "mean_coverage": sum(covers) / len(covers) if covers else math.nan,
        "min_coverage": min(covers, default=math.nan),
        "max_r_rmse_ratio": max(ratios, default=math.nan),
        "min_r_rmse_ratio": min(ratios, default=math.nan),
    }


def markdown_table(result: Mapping[str, Any]) -> str:
    """The results page's table, one judge a row, by truth kappa."""
    head = (
        "| judge | kappa | precision | recall | count ratio | coverage k / p / r / c "
        "| R RMSE with | without | ratio | R covered with / without |\n"
        "|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = [head]
    judges = result["judges"]
    for name in sorted(judges, key=lambda n: -judges[n]["truth"]["kappa"]):
        r = judges[name]
        t, c = r["truth"], r["coverage"]
        rows.append(
            f"| {name} | {t['kappa']:.3f} | {t['precision']:.3f} | {t['recall']:.3f} "
            f"| {t['count_ratio']:.2f} | "
            + " / ".join(f"{c[f]:.2f}" for f in FIGURES)
            + f" | {r['r_rmse_with']:.2f} | {r['r_rmse_without']:.2f} "
            f"| {r['r_rmse_ratio']:.3f} "
            f"| {r['r_coverage_with']:.2f} / {r['r_coverage_without']:.2f} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.studies.judge_audit")
    parser.add_argument("--human", type=Path, required=True)
    parser.add_argument("--judges", type=Path, required=True)
    parser.add_argument("--fraction", type=float, required=True)
    parser.add_argument("--seeds", type=int, required=True)
    parser.add_argument("--relevance-level", type=int, default=2)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    result = judge_audit_study(
        read_labels(args.human),
        read_judges(args.judges),
        fraction=args.fraction,
        seeds=args.seeds,
        relevance_level=args.relevance_level,
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    if args.markdown:
        print(markdown_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
