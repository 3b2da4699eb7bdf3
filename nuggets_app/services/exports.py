"""Exports in the formats evaluation tools read, deterministic byte for byte.

- qrels (``qid 0 docno rel``): human judgments, inferred judgments (a job plus a
  decision rule), or merged (human grades always override inferred ones); each with a
  provenance sidecar (JSON: job, parameters, rule, counts, and per line whether a
  person or the matcher decided, with the matching nugget);
- scores (``qid docno score nugget``): every result of a job;
- prels (``qid docno rel method inclusion_prob``): a sample's judged documents, for
  statAP (method 1 = drawn by the sampler, 0 = judged with certainty by design);
- passage qrels (``qid docno start length``): one line per distinct nugget span.

trec_eval conventions: four columns, integer grades, no topic without lines, lines
sorted by qid (numeric qids in numeric order, so every topic is contiguous) then docno.
A human grade for a document several assessors judged is the highest one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nuggets_app.models import (
    Collection,
    Document,
    Judgment,
    MatchJob,
    MatchResult,
    Nugget,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.services.inference import DecisionRule, human_grades, rule_apply

QRELS_KINDS = ("human", "inferred", "merged")


class ExportError(ValueError):
    """An export cannot be made as asked; the message says why."""


@dataclass
class Export:
    """An export's text lines and, for qrels, its provenance sidecar."""

    lines: list[str]
    provenance: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The file content (one line per record, newline-terminated)."""
        return "".join(f"{line}\n" for line in self.lines)

    def sidecar(self) -> str:
        """The provenance JSON (sorted keys, so it is deterministic)."""
        return json.dumps(self.provenance, sort_keys=True, indent=1) + "\n"

    def write(self, path: str | Path) -> list[Path]:
        """Write the file, and ``<path>.provenance.json`` when there is provenance."""
        path = Path(path)
        path.write_text(self.text(), encoding="utf-8")
        written = [path]
        if self.provenance is not None:
            side = path.with_name(path.name + ".provenance.json")
            side.write_text(self.sidecar(), encoding="utf-8")
            written.append(side)
        return written


def qid_key(qid: str) -> tuple:
    """Sort key: numeric qids in numeric order first, then the others as text."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def _line_key(row: tuple) -> tuple:
    return (qid_key(row[0]), row[1])


# --- qrels ------------------------------------------------------------------------------
def qrels_export(
    *,
    collection: Collection,
    kind: str = "human",
    job: MatchJob | None = None,
    rule: DecisionRule | None = None,
    topics: Iterable[Topic] | None = None,
) -> Export:
    """TREC qrels of human, inferred or merged judgments, with provenance."""
    if kind not in QRELS_KINDS:
        raise ExportError(
            f"qrels kind must be one of {', '.join(QRELS_KINDS)}, got {kind!r}"
        )
    if kind != "human":
        if job is None or rule is None:
            raise ExportError(f"{kind} qrels need a matching job and a decision rule")
        if job.collection_id != collection.pk:
            raise ExportError(f"job {job.pk} is not a job of {collection.name}")
        if job.status != MatchJob.Status.DONE:
            raise ExportError(f"job {job.pk} is {job.status}, not done")
    topic_qs = Topic.objects.filter(collection=collection)
    if topics is not None:
        topic_qs = topic_qs.filter(pk__in=[t.pk for t in topics])
    if job is not None and kind != "human":
        topic_qs = topic_qs.filter(match_jobs=job)
    qids = dict(topic_qs.values_list("pk", "qid"))
    records: dict[tuple[int, int], dict[str, Any]] = {}
    if kind in ("inferred", "merged"):
        records.update(_inferred_records(job, rule, collection, qids))
    if kind in ("human", "merged"):
        records.update(_human_records(qids))
    docnos = dict(
        Document.objects.filter(pk__in={d for _, d in records}).values_list(
            "pk", "docno"
        )
    )
    rows = sorted(
        ((qids[t], docnos[d], rec) for (t, d), rec in records.items()), key=_line_key
    )
    lines = [f"{qid} 0 {docno} {rec['rel']}" for qid, docno, rec in rows]
    provenance = {
        "format": "trec-qrels",
        "columns": "qid iter docno rel",
        "kind": kind,
        "collection": collection.name,
        "relevant_threshold": collection.relevant_threshold,
        "job": _job_info(job) if kind != "human" else None,
        "rule": rule.as_dict() if rule is not None and kind != "human" else None,
        "counts": _counts(rows, collection.relevant_threshold),
        "lines": [{"qid": q, "docno": d, **rec} for q, d, rec in rows],
    }
    return Export(lines=lines, provenance=provenance)


def _human_records(qids: dict[int, str]) -> dict[tuple[int, int], dict[str, Any]]:
    """Highest grade per (topic, document), with the assessors who gave it."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    rows = (
        Judgment.objects.filter(topic_id__in=list(qids), relevance__isnull=False)
        .order_by("topic_id", "document_id", "assessor__username")
        .values_list("topic_id", "document_id", "relevance", "assessor__username")
    )
    for topic_id, doc_id, grade, username in rows:
        rec = out.get((topic_id, doc_id))
        if rec is None or grade > rec["rel"]:
            out[(topic_id, doc_id)] = {
                "rel": grade,
                "source": "person",
                "assessors": [username],
            }
        elif grade == rec["rel"]:
            rec["assessors"].append(username)
    return out


def _inferred_records(
    job: MatchJob, rule: DecisionRule, collection: Collection, qids: dict[int, str]
) -> dict[tuple[int, int], dict[str, Any]]:
    decisions = rule_apply(
        job=job, rule=rule, topics=Topic.objects.filter(pk__in=list(qids))
    )
    scores = {
        (t, d): (s, n)
        for t, d, s, n in MatchResult.objects.filter(
            job=job, topic_id__in=list(qids)
        ).values_list("topic_id", "document_id", "score", "nugget_id")
    }
    grade = collection.relevant_threshold
    out = {}
    for topic_id, decided in decisions.items():
        for doc_id, relevant in decided.items():
            score, nugget = scores[(topic_id, doc_id)]
            out[(topic_id, doc_id)] = {
                "rel": grade if relevant else 0,
                "source": "matcher",
                "score": score,
                "nugget": nugget,
            }
    return out


def _job_info(job: MatchJob | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "id": job.pk,
        "name": job.name,
        "source": job.source,
        "pool": job.pool.name if job.pool_id else None,
        "sample": job.sample.name if job.sample_id else None,
        "k": job.k,
        "lam": job.lam,
        "stem": job.stem,
        "stopwords": job.stopwords,
        "nugget_filter": job.nugget_filter,
    }


def _counts(rows: list[tuple], threshold: int) -> dict[str, Any]:
    by_source: dict[str, int] = {}
    for _, _, rec in rows:
        by_source[rec["source"]] = by_source.get(rec["source"], 0) + 1
    return {
        "lines": len(rows),
        "topics": len({q for q, _, _ in rows}),
        "relevant": sum(rec["rel"] >= threshold for _, _, rec in rows),
        "person": by_source.get("person", 0),
        "matcher": by_source.get("matcher", 0),
    }


# --- scores, prels, passages ------------------------------------------------------------
def scores_export(*, job: MatchJob) -> Export:
    """``qid docno score nugget`` for every result of the job (nugget ``-`` if none);
    scores printed with ``repr`` so they read back exactly."""
    rows = MatchResult.objects.filter(job=job).values_list(
        "topic__qid", "document__docno", "score", "nugget_id"
    )
    ordered = sorted(rows, key=_line_key)
    lines = [
        f"{qid} {docno} {score!r} {nugget if nugget is not None else '-'}"
        for qid, docno, score, nugget in ordered
    ]
    return Export(lines=lines)


def prels_export(*, sample: Sample) -> Export:
    """prels of the sample's judged documents: ``qid docno rel method inclusion_prob``.

    Method 1 (drawn by the sampler) for statAP and uniform samples; a depth sample
    judges its documents with certainty by design, so method 0 with probability 1.
    """
    method = 0 if sample.method == Sample.Method.DEPTH else 1
    sampled = {
        (t, d): p
        for t, d, p in SampleDocument.objects.filter(sample=sample).values_list(
            "topic_id", "document_id", "inclusion_prob"
        )
    }
    grades = {
        key: g
        for key, g in human_grades({t for t, _ in sampled}).items()
        if key in sampled
    }
    qids = dict(
        Topic.objects.filter(pk__in={t for t, _ in grades}).values_list("pk", "qid")
    )
    docnos = dict(
        Document.objects.filter(pk__in={d for _, d in grades}).values_list(
            "pk", "docno"
        )
    )
    rows = sorted(
        (
            (qids[t], docnos[d], g, 1.0 if method == 0 else sampled[(t, d)])
            for (t, d), g in grades.items()
        ),
        key=_line_key,
    )
    lines = [f"{q} {d} {g} {method} {p!r}" for q, d, g, p in rows]
    return Export(lines=lines)


def passages_export(
    *, collection: Collection, topics: Iterable[Topic] | None = None
) -> Export:
    """``qid docno start length`` for every distinct nugget source span (character
    offsets into the canonical text)."""
    qs = Nugget.objects.filter(topic__collection=collection)
    if topics is not None:
        qs = qs.filter(topic__in=list(topics))
    spans = {
        (qid, docno, start, end - start)
        for qid, docno, start, end in qs.values_list(
            "topic__qid", "document__docno", "start", "end"
        )
    }
    rows = sorted(spans, key=lambda r: (qid_key(r[0]), r[1], r[2], r[3]))
    return Export(lines=[f"{q} {d} {s} {n}" for q, d, s, n in rows])
