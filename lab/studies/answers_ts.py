"""Nuggets that score answers, against people: the TREC Temporal Summarization matches.

In TREC TS 2013-2014 assessors read every pooled update (a sentence a system emitted)
of an event and marked each nugget of the event the sentence expresses. Every
(pooled sentence, nugget of its event) pair is thus labelled by people: matched or
not. The product's answer evaluation (:class:`nuggets_app.ir.answers.AnswerMatcher`,
the same code ``evaluate_answers`` runs) decides the same pairs with the sentence as
the answer; this script counts the agreement per year and threshold: precision,
recall and F1 of the matcher's "contains" against people's matches, per pair. For
the pairs both call matched it also counts how often the matcher's spans overlap the
span the person highlighted.

    python -m lab.studies.answers_ts DATA_DIR [--out report.json]

``DATA_DIR`` holds the folder's ``sentences.jsonl.gz``, ``matches.jsonl.gz`` and
``nuggets.jsonl`` (its README). Only a sentence's own matches count (not those a
duplicate update inherits), and only nuggets and sentences present in the files.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from matcher import MatchOptions, NuggetSpec
from nuggets_app.ir.answers import AnswerMatcher, pair_agreement

THRESHOLDS = (0.25, 0.5, 0.75, 1.0)


def _read(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def study(data: Path) -> dict[str, Any]:
    """The report: per year and threshold, the agreement counts and ratios."""
    nuggets: dict[str, list[dict]] = defaultdict(list)
    for row in _read(data / "nuggets.jsonl"):
        nuggets[row["qid"]].append(row)
    people: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for row in _read(data / "matches.jsonl.gz"):
        if row["nugget_known"] and row["sentence_known"]:
            key = (row["qid"], row["update_id"], row["nugget_id"])
            people[key].append((row["start"], row["end"]))
    sentences = _read(data / "sentences.jsonl.gz")
    options = MatchOptions()
    matchers: dict[str, AnswerMatcher] = {}
    pairs: dict[tuple[int, float], list[tuple[bool, bool]]] = defaultdict(list)
    overlap: dict[int, list[bool]] = defaultdict(list)
    started = time.perf_counter()
    for sentence in sentences:
        qid, year = sentence["qid"], sentence["year"]
        if qid not in nuggets:
            continue
        if qid not in matchers:
            specs: dict[str, NuggetSpec] = {}
            for n in nuggets[qid]:
                specs.setdefault(n["nugget_id"], NuggetSpec(n["nugget_id"], n["text"]))
            matchers[qid] = AnswerMatcher(list(specs.values()), options, 0.5)
        for found in matchers[qid].score(sentence["text"]):
            marked = people.get((qid, sentence["update_id"], found.nugget))
            for threshold in THRESHOLDS:
                pairs[(year, threshold)].append(
                    (found.score >= threshold, bool(marked))
                )
            if marked and found.contained:
                overlap[year].append(
                    any(a < e and s < b for a, b in found.spans for s, e in marked)
                )
    report: dict[str, Any] = {
        "sentences": len(sentences),
        "seconds": round(time.perf_counter() - started, 1),
        "rows": [],
    }
    for year in (2013, 2014, "all"):
        for threshold in THRESHOLDS:
            if year == "all":
                decided = pairs[(2013, threshold)] + pairs[(2014, threshold)]
            else:
                decided = pairs[(int(year), threshold)]
            a = pair_agreement(decided)
            row = {
                "year": year,
                "threshold": threshold,
                "pairs": len(decided),
                "people_matched": a.tp + a.fn,
                "matcher_contains": a.tp + a.fp,
                "tp": a.tp,
                "fp": a.fp,
                "fn": a.fn,
                "tn": a.tn,
                "precision": a.precision,
                "recall": a.recall,
                "f1": a.f1,
            }
            if threshold == 0.5:
                spans = (
                    overlap[2013] + overlap[2014]
                    if year == "all"
                    else overlap[int(year)]
                )
                row["tp_span_overlaps_person"] = (
                    sum(spans) / len(spans) if spans else None
                )
            report["rows"].append(row)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = study(args.data)
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    print(
        "| year | threshold | pairs | people | matcher | TP | precision | recall | F1 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in report["rows"]:
        print(
            f"| {r['year']} | {r['threshold']} | {r['pairs']} | {r['people_matched']} | "
            f"{r['matcher_contains']} | {r['tp']} | {r['precision']:.3f} | "
            f"{r['recall']:.3f} | {r['f1']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
