"""``manage.py evaluate_matcher``: read nuggets, units and human matches, score every
pair with each scoring function, and write the report (JSON, Markdown, PR plot).

Files (the TREC TS layout of the shared data; every file may be gzipped):

* nuggets: any nugget-bank format (:mod:`nuggets_app.importers.nuggets`); the
  nugget id is the file's id (e.g. ``VMTS14.25.008``), the grade its importance;
* units: JSONL with ``text``, the unit id in ``unit_field`` (``update_id`` for
  sentences, ``docno`` for pseudo-documents) and its topic in ``qid`` or ``qids``;
* gold: JSONL with ``qid``, ``nugget_id``, the unit id in ``unit_field`` and the
  human span ``start``/``end`` in the unit text (null when not placed).

The maths is :mod:`lab.maths.matcher_eval`; this module only reads, counts and
writes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lab.maths.matcher_eval import (
    GoldNugget,
    MatchQuality,
    Pair,
    Scores,
    Unit,
    bm25_scores,
    candidate_pairs,
    combined_scores,
    match_quality,
    matched_spans,
    minspan_scores,
    recall_by,
    semantic_scores,
    unit_gold,
    unit_scores,
)
from lab.services.report_json import json_safe
from matcher import MatchOptions, normalize
from nuggets_app.importers.nuggets import parse_nuggets
from nuggets_app.learning.embeddings import MODEL_NAME
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS, Embed

LENGTH_BINS = ((1, 3, "1-3"), (4, 6, "4-6"), (7, 10, "7-10"), (11, 10**9, "11+"))
# Weights of min-span in the combined scorings evaluate_matcher reports.
SEMANTIC_WEIGHTS = (0.25, 0.5, 0.75)
CACHE_EVERY = 1000


@dataclass
class EvaluationInput:
    """What the files hold, restricted to the topics asked for."""

    units: list[Unit]
    nuggets: list[GoldNugget]
    gold: set[Pair]
    spans: dict[Pair, list[tuple[int, int]]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)


def _rows(path: str | Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        for line in handle:
            if line.strip():
                yield json.loads(line)


def evaluation_load(
    *,
    nuggets_path: str | Path,
    units_path: str | Path,
    gold_path: str | Path,
    unit_field: str,
    qid_prefix: str = "",
) -> EvaluationInput:
    """Read the three files; topics are those whose qid starts with ``qid_prefix``."""
    nuggets = [
        GoldNugget(r.source_id or str(r.line), r.qid, r.text, r.grade)
        for r in parse_nuggets(nuggets_path)
        if r.qid.startswith(qid_prefix)
    ]
    known = {(n.qid, n.id) for n in nuggets}
    topics = {n.qid for n in nuggets}
    units: list[Unit] = []
    seen: set[tuple[str, str]] = set()
    for row in _rows(units_path):
        qids = row.get("qids") or [row.get("qid")]
        for qid in qids:
            key = (qid, row[unit_field])
            if qid in topics and key not in seen:
                seen.add(key)
                units.append(Unit(row[unit_field], qid, row["text"]))
    data = EvaluationInput(units=units, nuggets=nuggets, gold=set())
    skipped = {"unknown_nugget": 0, "unknown_unit": 0}
    for row in _rows(gold_path):
        qid = row["qid"]
        if not qid.startswith(qid_prefix):
            continue
        pair = (qid, row[unit_field], row["nugget_id"])
        if (qid, row["nugget_id"]) not in known:
            skipped["unknown_nugget"] += 1
            continue
        if (qid, row[unit_field]) not in seen:
            skipped["unknown_unit"] += 1
            continue
        data.gold.add(pair)
        if row.get("start") is not None and row.get("end") is not None:
            data.spans.setdefault(pair, []).append((row["start"], row["end"]))
    data.skipped = skipped
    return data


def file_cached_embed(embed: Embed, path: Path | None) -> Embed:
    """``embed`` with its vectors kept in ``path`` (``.npz`` of the texts' sha1 and
    float32 vectors, written every :data:`CACHE_EVERY` new texts), so that later (or
    interrupted) runs embed only new texts."""
    if path is None:
        return embed
    known: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path, allow_pickle=False) as stored:
            keys = (
                stored["keys"].tolist()
                if "keys" in stored
                else [_sha1(t) for t in stored["texts"].tolist()]
            )
            known = dict(zip(keys, stored["vectors"], strict=True))

    def cached(texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if _sha1(t) not in known]
        # Saved every CACHE_EVERY texts, so an interrupted run loses little.
        for start in range(0, len(new), CACHE_EVERY):
            part = new[start : start + CACHE_EVERY]
            known.update(zip(map(_sha1, part), embed(part), strict=True))
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(
                path,
                keys=np.array(list(known)),
                vectors=np.vstack(list(known.values())).astype(np.float32),
            )
        return np.vstack([known[_sha1(t)] for t in texts]).astype(np.float32)

    return cached


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _quality_dict(quality: MatchQuality) -> dict[str, Any]:
    out = asdict(quality)
    out["points"] = [asdict(p) for p in quality.points]
    return out


def _restrict(scores: Scores, keep: set[str], grades: dict[tuple[str, str], Any]):
    return {p: s for p, s in scores.items() if str(grades.get((p[0], p[2]))) in keep}


def _terms(text: str, options: MatchOptions) -> list[str]:
    return normalize(text, options)


def _length_bin(count: int) -> str:
    return next(label for low, high, label in LENGTH_BINS if low <= count <= high)


def _overlap_bin(share: float) -> str:
    if share == 0:
        return "none"
    return "some (<50%)" if share < 0.5 else "most (>=50%)"


def _stable(pair: Pair) -> str:
    return hashlib.sha1("\t".join(pair).encode()).hexdigest()


def evaluation_run(
    data: EvaluationInput,
    *,
    ks: Sequence[int] = (3,),
    lams: Sequence[float] = (0.5,),
    bm25: bool = True,
    examples: int = 15,
    embed: Embed | None = None,
    weights: Sequence[float] = SEMANTIC_WEIGHTS,
    max_words: int = DEFAULT_MAX_WORDS,
) -> dict[str, Any]:
    """Score every pair with min-span (each k and lambda), nugget-BM25 and, given
    ``embed``, the semantic scorer and its combinations with the best min-span
    setting by pair AP (one per weight of min-span); report pair-level and
    unit-level quality overall and per grade, the failure analysis of the first
    min-span scoring at its best-F1 threshold, and every scoring's recall by
    nugget length and term overlap at its own best-F1 threshold."""
    scorings: dict[str, Scores] = {}
    for k in ks:
        for lam, scores in minspan_scores(
            data.units, data.nuggets, k=k, lams=lams
        ).items():
            scorings[f"minspan k={k} lam={lam:g}"] = scores
    if bm25:
        scorings["nugget-bm25 (normalised)"] = bm25_scores(data.units, data.nuggets)
    pairs = candidate_pairs(data.units, data.nuggets)
    if embed is not None:
        semantic = semantic_scores(data.units, data.nuggets, embed, max_words=max_words)
        lexical = max(
            (name for name in scorings if name.startswith("minspan")),
            key=lambda name: (
                match_quality(scorings[name], data.gold, pairs=pairs).average_precision
            ),
        )
        scorings[f"semantic {MODEL_NAME}"] = semantic
        for weight in weights:
            scorings[f"combined {weight:g} x ({lexical}) + semantic"] = combined_scores(
                scorings[lexical], semantic, weight=weight
            )
    grades = {(n.qid, n.id): n.grade for n in data.nuggets}
    grade_values = sorted({str(g) for g in grades.values()})
    nugget_counts: dict[str, int] = {}
    for n in data.nuggets:
        nugget_counts[str(n.grade)] = nugget_counts.get(str(n.grade), 0) + 1
    units_per_topic: dict[str, int] = {}
    for u in data.units:
        units_per_topic[u.qid] = units_per_topic.get(u.qid, 0) + 1
    report: dict[str, Any] = {
        "units": len(data.units),
        "nuggets": len(data.nuggets),
        "topics": len({n.qid for n in data.nuggets}),
        "pairs": pairs,
        "gold": len(data.gold),
        "gold_units": len(unit_gold(data.gold)),
        "skipped_gold": data.skipped,
        "scorings": {},
    }
    for name, scores in scorings.items():
        per_grade = {}
        for grade in grade_values:
            gold_g = {p for p in data.gold if str(grades[(p[0], p[2])]) == grade}
            pairs_g = sum(
                units_per_topic.get(n.qid, 0)
                for n in data.nuggets
                if str(n.grade) == grade
            )
            per_grade[grade] = _quality_dict(
                match_quality(_restrict(scores, {grade}, grades), gold_g, pairs=pairs_g)
            )
        report["scorings"][name] = {
            "pair": _quality_dict(match_quality(scores, data.gold, pairs=pairs)),
            "unit": _quality_dict(
                match_quality(
                    unit_scores(scores), unit_gold(data.gold), pairs=len(data.units)
                )
            ),
            "per_grade": per_grade,
        }
    # The failure analysis looks at the project's default matcher where it was run.
    default = "minspan k=3 lam=0.5"
    first = default if default in scorings else next(iter(scorings))
    k_first = 3 if first == default else ks[0]
    report["failures"] = _failures(
        data, scorings[first], report, first, k_first, examples
    )
    keys = _gold_keys(data, k_first)
    report["recall_at_best_f1"] = {
        name: _recalls(data, scores, report["scorings"][name], keys)
        for name, scores in scorings.items()
    }
    return report


def _gold_keys(
    data: EvaluationInput, k: int
) -> tuple[dict[Pair, str], dict[Pair, str]]:
    """Each gold pair's nugget-length bin and span-overlap bin (module doc)."""
    options = MatchOptions(k=k)
    texts = {(u.qid, u.id): u.text for u in data.units}
    nuggets = {(n.qid, n.id): n for n in data.nuggets}
    length_key: dict[Pair, str] = {}
    overlap_key: dict[Pair, str] = {}
    for pair in data.gold:
        terms = _terms(nuggets[(pair[0], pair[2])].text, options)
        length_key[pair] = _length_bin(len(terms))
        spans = data.spans.get(pair)
        if spans:
            text = texts[(pair[0], pair[1])]
            span_terms = set()
            for start, end in spans:
                span_terms.update(_terms(text[start:end], options))
            share = len(set(terms) & span_terms) / len(set(terms)) if terms else 0.0
            overlap_key[pair] = _overlap_bin(share)
        else:
            overlap_key[pair] = "no span"
    return length_key, overlap_key


def _recalls(
    data: EvaluationInput,
    scores: Scores,
    result: dict[str, Any],
    keys: tuple[dict[Pair, str], dict[Pair, str]],
) -> dict[str, Any]:
    threshold = result["pair"]["best_threshold"]
    if not math.isfinite(threshold):
        threshold = 0.5
    found = {p for p, s in scores.items() if s >= threshold and s > 0}
    by_length = recall_by(data.gold, found, keys[0])
    return {
        "threshold": threshold,
        "recall_by_nugget_terms": {
            label: by_length[label] for _, _, label in LENGTH_BINS if label in by_length
        },
        "recall_by_span_overlap": recall_by(data.gold, found, keys[1]),
    }


def _failures(
    data: EvaluationInput,
    scores: Scores,
    report: dict[str, Any],
    name: str,
    k: int,
    examples: int,
) -> dict[str, Any]:
    threshold = report["scorings"][name]["pair"]["best_threshold"]
    if not math.isfinite(threshold):
        threshold = 0.5
    texts = {(u.qid, u.id): u.text for u in data.units}
    nuggets = {(n.qid, n.id): n for n in data.nuggets}
    found = {p for p, s in scores.items() if s >= threshold and s > 0}
    length_key, overlap_key = _gold_keys(data, k)

    def show(pair: Pair, human: bool) -> dict[str, Any]:
        text = texts[(pair[0], pair[1])]
        nugget = nuggets[(pair[0], pair[2])]
        windows = matched_spans(text, nugget.text, k=k)
        row: dict[str, Any] = {
            "qid": pair[0],
            "unit": pair[1],
            "nugget": pair[2],
            "grade": nugget.grade,
            "nugget_text": nugget.text,
            "score": round(scores.get(pair, 0.0), 4),
            "matched": [text[s:e] for s, e in windows],
        }
        if human:
            row["human_span"] = [text[s:e] for s, e in data.spans.get(pair, [])]
        return row

    # One example per nugget first (in a stable pseudo-random order), then the rest.
    misses = sorted((p for p in data.gold if p not in found), key=_stable)
    first_of_nugget: dict[tuple[str, str], Pair] = {}
    for pair in misses:
        first_of_nugget.setdefault((pair[0], pair[2]), pair)
    spread = list(first_of_nugget.values())
    misses = spread + [p for p in misses if p not in set(spread)]
    false = sorted(
        (p for p in found if p not in data.gold), key=lambda p: (-scores[p], p)
    )
    return {
        "scoring": name,
        "threshold": threshold,
        "misses": len(misses),
        "false_matches": len(false),
        "recall_by_nugget_terms": {
            label: by_length[label]
            for _, _, label in LENGTH_BINS
            if label in (by_length := recall_by(data.gold, found, length_key))
        },
        "recall_by_span_overlap": recall_by(data.gold, found, overlap_key),
        "miss_examples": [show(p, True) for p in misses[:examples]],
        "false_match_examples": [show(p, False) for p in false[:examples]],
    }


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def report_markdown(report: dict[str, Any], title: str) -> str:
    """The report as Markdown tables."""
    lines = [
        f"# {title}",
        "",
        f"{report['topics']} topics, {report['units']} units, {report['nuggets']} "
        f"nuggets, {report['pairs']} candidate pairs, {report['gold']} gold pairs "
        f"({report['gold_units']} units with a gold match); gold rows skipped: "
        f"{report['skipped_gold']}.",
        "",
        "| scoring | level | AP | best F1 | at threshold | P | R |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, result in report["scorings"].items():
        for level in ("pair", "unit"):
            q = result[level]
            lines.append(
                f"| {name} | {level} | {_fmt(q['average_precision'])} | "
                f"{_fmt(q['best_f1'])} | {_fmt(q['best_threshold'])} | "
                f"{_fmt(q['best_precision'])} | {_fmt(q['best_recall'])} |"
            )
    lines += ["", "Per importance grade (pair level):", ""]
    lines += [
        "| scoring | grade | gold | AP | best F1 | at threshold |",
        "|---|---|---|---|---|---|",
    ]
    for name, result in report["scorings"].items():
        for grade, q in result["per_grade"].items():
            lines.append(
                f"| {name} | {grade} | {q['gold']} | {_fmt(q['average_precision'])} | "
                f"{_fmt(q['best_f1'])} | {_fmt(q['best_threshold'])} |"
            )
    lines += ["", "Precision / recall / F1 per threshold (pair level):", ""]
    lines += [
        "| scoring | "
        + " | ".join(
            f"{p['threshold']:.2f}"
            for p in next(iter(report["scorings"].values()))["pair"]["points"][1::2]
        )
        + " |"
    ]
    lines += ["|---" * 11 + "|"]
    for name, result in report["scorings"].items():
        cells = [
            f"{p['precision']:.2f}/{p['recall']:.2f}/{p['f1']:.2f}"
            for p in result["pair"]["points"][1::2]
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    fail = report["failures"]
    lines += [
        "",
        f"Failure analysis: {fail['scoring']} at its best-F1 threshold "
        f"{_fmt(fail['threshold'])}: {fail['misses']} misses, {fail['false_matches']} "
        "false matches.",
    ]
    for heading, table in (
        ("nugget length (terms)", "recall_by_nugget_terms"),
        ("nugget terms in the human span", "recall_by_span_overlap"),
    ):
        lines += ["", f"| {heading} | gold | found | recall |", "|---|---|---|---|"]
        for key, (n, hit, recall) in fail[table].items():
            lines.append(f"| {key} | {n} | {hit} | {_fmt(recall)} |")
    lines += [
        "",
        "Recall of the gold pairs at each scoring's best-F1 threshold, by nugget "
        "length (terms) and by the share of the nugget's terms the human span "
        "repeats:",
        "",
    ]
    recalls = report.get("recall_at_best_f1", {})
    length_labels = [label for _, _, label in LENGTH_BINS]
    overlap_labels = sorted(
        {key for r in recalls.values() for key in r["recall_by_span_overlap"]}
    )
    lines += [
        "| scoring | t | " + " | ".join(length_labels + overlap_labels) + " |",
        "|---" * (2 + len(length_labels) + len(overlap_labels)) + "|",
    ]
    for name, r in recalls.items():
        cells = [
            _fmt(r["recall_by_nugget_terms"].get(label, (0, 0, None))[2])
            for label in length_labels
        ] + [
            _fmt(r["recall_by_span_overlap"].get(label, (0, 0, None))[2])
            for label in overlap_labels
        ]
        lines.append(f"| {name} | {_fmt(r['threshold'])} | " + " | ".join(cells) + " |")
    lines += ["", "Misses (gold pairs below the threshold):", ""]
    for row in fail["miss_examples"]:
        lines.append(
            f"- {row['qid']} {row['nugget']} (grade {row['grade']}, score "
            f'{row["score"]}): nugget "{row["nugget_text"]}"; human span '
            f"{json.dumps(row['human_span'], ensure_ascii=False)}; matched "
            f"{json.dumps(row['matched'], ensure_ascii=False)}"
        )
    lines += ["", "False matches (highest-scoring pairs people did not match):", ""]
    for row in fail["false_match_examples"]:
        lines.append(
            f"- {row['qid']} {row['nugget']} in {row['unit']} (score {row['score']}): "
            f'nugget "{row["nugget_text"]}"; matched '
            f"{json.dumps(row['matched'], ensure_ascii=False)}"
        )
    return "\n".join(lines) + "\n"


def report_write(report: dict[str, Any], out_dir: Path, title: str) -> list[Path]:
    """``report.json``, ``report.md`` and ``pr.png`` (precision-recall per scoring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / "report.json", out_dir / "report.md", out_dir / "pr.png"]
    paths[0].write_text(json.dumps(json_safe(report), indent=1))
    paths[1].write_text(report_markdown(report, title))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, result in report["scorings"].items():
        points = result["pair"]["points"]
        ax.plot(
            [p["recall"] for p in points],
            [p["precision"] for p in points],
            marker=".",
            label=f"{name} (AP {result['pair']['average_precision']:.3f})",
        )
    ax.set_xlabel("recall (pairs)")
    ax.set_ylabel("precision (pairs)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(paths[2], dpi=110)
    plt.close(fig)
    return paths
