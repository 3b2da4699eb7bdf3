"""Subtopic qrels from a judged sample and from nugget matching, against the full ones.

TREC TS nuggets as subtopics: every NIST nugget of a topic is one subtopic, and a
document covers it when the assessors matched the nugget in one of its pooled
sentences (``doc_matches.jsonl.gz``, own or inherited matches, nuggets of importance
>= 1). For one finished ``simulate --nuggets human`` job on the TS pseudo-collection
(its database holding that simulation's judgments, the TS matches imported as a nugget
bank whose nuggets are their own aspects), the runs are scored by alpha-nDCG@10,
ERR-IA@10 and subtopic recall@10 (``nuggets_app.ir.diversity``) under

- **full**: every (topic, nugget, document) the assessors matched;
- **sample**: ``export_qrels --kind subtopics`` without a job: the judged relevant
  documents of the sample with the nuggets matched in them (the bank's spans);
- **sample+inferred**: the same with the job: unjudged documents also cover the aspect
  of every job nugget they match with a min-span score >= the threshold (0.5, and 0.3
  and 0.8 for comparison).

Means are over the job's topics (those with nuggets); a topic a qrels has no line for
counts 0. Each system ranking is compared with the full qrels' by Kendall's tau, and
the lines of each qrels with the full lines (precision and recall; the inferred lines
alone against the full lines of the unjudged documents).

Usage (from the repository root, DATA_DIR naming the simulation's database):
  python -m lab.studies.diversity.experiment --job N --seed S
         --matches DOC_MATCHES.jsonl.gz --runs DIR --out OUT.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

from lab.studies.system_rankings import read_runs, taus_against_full, write_report
from nuggets_app.inference.selectors import job_nuggets
from nuggets_app.inference.services.diversity import subtopics_export
from nuggets_app.ir.diversity import diversity_evaluate
from nuggets_app.models import Judgment, MatchJob, Topic

K = 10
MEASURES = (f"alpha_nDCG@{K}", f"ERR_IA@{K}", f"StRecall@{K}")
THRESHOLDS = (0.3, 0.5, 0.8)
SHUFFLED = "sample+inferred@0.5, aspects shuffled"
Lines = set[tuple[str, str, str]]


def full_lines(path: Path, qids: set[str]) -> Lines:
    """(qid, nugget, docno) of every match of a nugget of importance >= 1."""
    lines: Lines = set()
    with gzip.open(path, "rt", encoding="utf-8") as rows:
        for row in map(json.loads, rows):
            if row["qid"] in qids and (row["importance"] or 0) >= 1:
                lines.add((row["qid"], row["nugget_id"], row["docno"]))
    return lines


def table_of(lines: Lines) -> dict[str, dict[str, dict[str, int]]]:
    table: dict[str, dict[str, dict[str, int]]] = {}
    for q, s, d in lines:
        table.setdefault(q, {}).setdefault(s, {})[d] = 1
    return table


def scores(
    lines: Lines, runs: dict[str, dict[str, dict[str, float]]], qids: list[str]
) -> dict[str, dict[str, float]]:
    """Mean of each measure per run over ``qids`` (0 for a topic without lines)."""
    table = table_of(lines)
    out = {}
    for name, run in runs.items():
        per_topic = diversity_evaluate(table, run, k=K).per_topic
        out[name] = {
            m: sum(per_topic.get(q, {}).get(m, 0.0) for q in qids) / len(qids)
            for m in MEASURES
        }
    return out


def agreement(lines: Lines, truth: Lines) -> dict[str, float | int]:
    """Line precision and recall, and how many of the lines' (topic, document) pairs
    cover some subtopic at all (the document-level precision)."""
    hit = len(lines & truth)
    pairs = {(q, d) for q, _, d in lines}
    relevant = {(q, d) for q, _, d in truth}
    return {
        "lines": len(lines),
        "correct": hit,
        "precision": hit / len(lines) if lines else 0.0,
        "recall": hit / len(truth) if truth else 0.0,
        "documents": len(pairs),
        "documents_relevant": len(pairs & relevant),
    }


def export_lines(job: MatchJob, threshold: float | None) -> tuple[Lines, Lines]:
    """(all lines, the matcher's lines) of the subtopic export, with or without job."""
    export = subtopics_export(
        collection=job.collection,
        job=job if threshold is not None else None,
        threshold=threshold if threshold is not None else 0.5,
        topics=Topic.objects.filter(match_jobs=job),
    )
    rows = (export.provenance or {})["lines"]
    every = {(r["qid"], r["subtopic"], r["docno"]) for r in rows}
    inferred = {
        (r["qid"], r["subtopic"], r["docno"]) for r in rows if r["source"] == "matcher"
    }
    return every, inferred


def shuffled_aspects(inferred: Lines, job: MatchJob, seed: int) -> Lines:
    """The control: the same inferred (topic, document) pairs, each line's aspect
    replaced by a random aspect of the job's nuggets of that topic. What survives it
    comes from inferring relevant documents, not from which aspect they cover."""
    pool: dict[str, set[str]] = {}
    for topic in Topic.objects.filter(match_jobs=job):
        aspects = {n.aspect for n in job_nuggets(job, topic.pk) if n.aspect}
        pool[topic.qid] = aspects
    rng = random.Random(seed)
    return {(q, rng.choice(sorted(pool[q])), d) for q, _, d in sorted(inferred)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--job", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--matches", type=Path, required=True)
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    job = MatchJob.objects.get(pk=args.job)
    qids = sorted(Topic.objects.filter(match_jobs=job).values_list("qid", flat=True))
    truth = full_lines(args.matches, set(qids))
    runs = read_runs(args.runs, set(qids))
    judged = set(
        Judgment.objects.filter(
            topic__qid__in=qids, topic__collection=job.collection
        ).values_list("topic__qid", "document__docno")
    )
    truth_unjudged = {line for line in truth if (line[0], line[2]) not in judged}
    sample, _ = export_lines(job, None)
    variants: dict[str, Lines] = {"full": truth, "sample": sample}
    lines_report: dict[str, dict] = {
        "full": {"lines": len(truth)},
        "sample": agreement(sample, truth),
    }
    for threshold in THRESHOLDS:
        every, inferred = export_lines(job, threshold)
        name = f"sample+inferred@{threshold}"
        variants[name] = every
        lines_report[name] = {
            **agreement(every, truth),
            "inferred": agreement(inferred, truth_unjudged),
        }
        if threshold == 0.5:
            shuffled = shuffled_aspects(inferred, job, args.seed)
            variants[SHUFFLED] = (every - inferred) | shuffled
            lines_report[SHUFFLED] = {
                **agreement(variants[SHUFFLED], truth),
                "inferred": agreement(shuffled, truth_unjudged),
            }
    means = {name: scores(lines, runs, qids) for name, lines in variants.items()}
    names = sorted(runs)
    tau = taus_against_full(means, names, list(MEASURES))
    counts = {
        "topics": len(qids),
        "runs": len(names),
        "judged": len(judged),
        "judged_relevant_docs_with_lines": len({(q, d) for q, _, d in sample}),
        "full_unjudged_lines": len(truth_unjudged),
        "subtopics_full": len({(q, s) for q, s, _ in truth}),
        "subtopics_sample": len({(q, s) for q, s, _ in sample}),
    }
    report = {
        "job": job.pk,
        "seed": args.seed,
        "counts": counts,
        "lines": lines_report,
        "tau": tau,
        "means": means,
    }
    write_report(args.out, report, tau)


if __name__ == "__main__":
    main()
