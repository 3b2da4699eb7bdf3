"""Learning-to-rank training sets from a matching job's judged and inferred documents.

:func:`ltr_export` takes the job's merged qrels under a decision rule (human grades
override inferred ones, exactly as ``export_qrels --kind merged``), computes the
:mod:`lab.maths.ltr` features of every (topic, document) line, and returns the
SVMlight/LETOR text of the whole set and of each of ``folds`` topic folds, with a
features description and a provenance record. Topics the rule cannot decide keep only
their judged documents, as in the qrels exports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lab.maths import ltr as ltr_ir
from nuggets_app.collection.services.suite_runs import topic_queries
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import qrels_export
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.models import Document, MatchJob, MatchResult, Topic

LtrError = ltr_ir.LtrError


@dataclass
class LtrExport:
    """The training set: lines per fold (``all`` holds every topic), descriptions."""

    folds: dict[int, list[str]]
    lines: list[str]
    features: str
    provenance: dict[str, Any] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> list[Path]:
        """``all.txt``, ``fold1.txt`` ... ``foldK.txt`` (the test topics of each fold:
        train on the others), ``features.txt`` and ``provenance.json``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        files = {"all.txt": self.lines}
        files.update({f"fold{k}.txt": v for k, v in sorted(self.folds.items())})
        for name, lines in files.items():
            path = out / name
            path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            written.append(path)
        (out / "features.txt").write_text(self.features, encoding="utf-8")
        (out / "provenance.json").write_text(
            json.dumps(self.provenance, sort_keys=True, indent=1) + "\n",
            encoding="utf-8",
        )
        return [*written, out / "features.txt", out / "provenance.json"]


def _matcher_scores(job: MatchJob) -> dict[tuple[int, int], float]:
    rows = MatchResult.objects.filter(job=job).values_list(
        "topic_id", "document_id", "score"
    )
    return {(t, d): float(s) for t, d, s in rows.iterator(chunk_size=5000)}


def _model_p(job: MatchJob) -> dict[tuple[int, int], float]:
    out: dict[tuple[int, int], float] = {}
    for topic_id, (docs, p) in job_probabilities(job=job, override=False).items():
        out.update(
            ((topic_id, d), v) for d, v in zip(docs.tolist(), p.tolist(), strict=False)
        )
    return out


def ltr_export(
    *, job: MatchJob, rule: DecisionRule, folds: int = 5, seed: int = 1
) -> LtrExport:
    """The job's training set under ``rule``, dealt into ``folds`` folds by topic."""
    collection = job.collection
    merged = qrels_export(collection=collection, kind="merged", job=job, rule=rule)
    records = merged.provenance["lines"] if merged.provenance else []
    if not records:
        raise LtrError(f"job {job.pk} has no judged or inferred document to export")
    topics = {t.qid: t for t in Topic.objects.filter(collection=collection)}
    queries = dict(topic_queries(topics[q] for q in {r["qid"] for r in records}))
    fold_of = ltr_ir.topic_folds(queries, k=folds, seed=seed)
    numbers = ltr_ir.numeric_qids(queries)
    docs = Document.objects.filter(collection=collection).order_by("docno")
    indexes = ltr_ir.FieldIndexes.build(
        docs.values_list("docno", "title", "text").iterator(chunk_size=2000)
    )
    doc_ids = dict(docs.values_list("docno", "pk"))
    scores, model_p = _matcher_scores(job), _model_p(job)
    by_qid: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_qid.setdefault(rec["qid"], []).append(rec)
    lines: list[str] = []
    per_fold: dict[int, list[str]] = {k: [] for k in range(1, folds + 1)}
    counts = {"person": 0, "inferred": 0, "relevant": 0}
    for qid in sorted(by_qid, key=qid_key):
        recs = by_qid[qid]
        topic_id = topics[qid].pk
        keys = [(topic_id, doc_ids[r["docno"]]) for r in recs]
        matrix = ltr_ir.topic_features(
            indexes,
            queries[qid],
            [r["docno"] for r in recs],
            [scores.get(k, 0.0) for k in keys],
            [model_p.get(k, 0.0) for k in keys],
        )
        for rec, row in zip(recs, matrix, strict=True):
            source = "person" if rec["source"] == "person" else "inferred"
            counts[source] += 1
            counts["relevant"] += rec["rel"] >= collection.relevance_level
            line = ltr_ir.svmlight_line(
                rec["rel"],
                numbers[qid],
                np.asarray(row).tolist(),
                f"{rec['docno']} {source}",
            )
            lines.append(line)
            per_fold[fold_of[qid]].append(line)
    provenance = {
        "format": "svmlight",
        "line": "rel qid:Q 1:v ... # docno person|inferred",
        "collection": collection.name,
        "job": job.pk,
        "rule": rule.as_dict(),
        "labels": "merged qrels: human grade where judged, else the rule's decision "
        f"(grade {collection.relevance_level} or 0)",
        "undecided_topics": merged.provenance.get("undecided_topics", [])
        if merged.provenance
        else [],
        "features": list(ltr_ir.FEATURE_NAMES),
        "folds": folds,
        "seed": seed,
        "fold_of_qid": {q: fold_of[q] for q in sorted(fold_of, key=qid_key)},
        "qid_numbers": {q: numbers[q] for q in sorted(numbers, key=qid_key)},
        "counts": {**counts, "lines": len(lines), "topics": len(by_qid)},
    }
    return LtrExport(
        folds=per_fold,
        lines=lines,
        features=ltr_ir.features_description(),
        provenance=provenance,
    )
