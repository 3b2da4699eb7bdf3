"""Subtopic qrels from nuggets' aspects: which aspects a judged or inferred document
covers, in the TREC diversity format ``qid subtopic docno rel``.

A nugget filed under an aspect (``Nugget.aspect``) makes its topic's aspect a
subtopic. **Human**: a document judged relevant covers the aspects of the nuggets
extracted from it, at its judged grade. **Inferred** (with a matching job): an
unjudged document covers an aspect when it matches a nugget of that aspect with a
min-span score at or above ``threshold``, at the collection's relevant grade; a judged
document keeps only what its judgment and nuggets say (human override). Lines carry
their provenance (person or matcher, the nuggets) in the sidecar.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nuggets_app.inference.services.evidence import evidence_nugget_scores
from nuggets_app.inference.services.exports import Export, job_check_done
from nuggets_app.ir.diversity import subtopic_qrels_lines
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import Collection, Document, MatchChunk, MatchJob, Nugget, Topic


def subtopics_export(
    *,
    collection: Collection,
    job: MatchJob | None = None,
    threshold: float = 0.5,
    topics: Iterable[Topic] | None = None,
) -> Export:
    """Subtopic qrels of the collection (human only without ``job``), with provenance."""
    if job is not None:
        job_check_done(job, collection)
    topic_qs = Topic.objects.filter(collection=collection)
    if topics is not None:
        topic_qs = topic_qs.filter(pk__in=[t.pk for t in topics])
    qids = dict(topic_qs.values_list("pk", "qid"))
    nuggets = list(
        Nugget.objects.filter(topic_id__in=list(qids))
        .exclude(aspect="")
        .values_list("pk", "topic_id", "document_id", "aspect")
    )
    aspect_of = {pk: aspect for pk, _, _, aspect in nuggets}
    grades = human_grades(qids)
    relevant = collection.relevance_level
    records: dict[tuple[int, str, int], dict[str, Any]] = {}
    for pk, topic_id, doc_id, aspect in nuggets:
        grade = grades.get((topic_id, doc_id)) if doc_id is not None else None
        if grade is None or grade < relevant:
            continue
        rec = records.setdefault(
            (topic_id, aspect, doc_id),
            {"rel": grade, "source": "person", "nuggets": []},
        )
        rec["nuggets"].append(pk)
    if job is not None:
        chunks = MatchChunk.objects.filter(
            job=job, topic_id__in=list(qids), packed_evidence__isnull=False
        )
        for topic_id, blob in chunks.values_list("topic_id", "packed_evidence"):
            for doc_id, scores in evidence_nugget_scores(bytes(blob), job.lam).items():
                if (topic_id, doc_id) in grades:
                    continue
                for nugget, score in scores.items():
                    aspect = aspect_of.get(nugget)
                    if aspect is None or score < threshold:
                        continue
                    rec = records.setdefault(
                        (topic_id, aspect, doc_id),
                        {"rel": relevant, "source": "matcher", "nuggets": []},
                    )
                    rec["nuggets"].append(nugget)
    docnos = dict(
        Document.objects.filter(pk__in={d for _, _, d in records}).values_list(
            "pk", "docno"
        )
    )
    table: dict[str, dict[str, dict[str, int]]] = {}
    detail: dict[tuple[str, str, str], dict[str, Any]] = {}
    for (topic_id, aspect, doc_id), rec in records.items():
        key = (qids[topic_id], aspect, docnos[doc_id])
        table.setdefault(key[0], {}).setdefault(aspect, {})[key[2]] = rec["rel"]
        detail[key] = {**rec, "nuggets": sorted(rec["nuggets"])}
    lines = subtopic_qrels_lines(table)
    uncovered = {
        t.qid: [a["id"] for a in t.aspects if a.get("id") not in table.get(t.qid, {})]
        for t in topic_qs
        if t.aspects
    }
    provenance = {
        "format": "trec-diversity-qrels",
        "columns": "qid subtopic docno rel",
        "collection": collection.name,
        "job": job.pk if job is not None else None,
        "threshold": threshold if job is not None else None,
        "aspects_without_documents": {q: a for q, a in uncovered.items() if a},
        "counts": {
            "lines": len(lines),
            "person": sum(r["source"] == "person" for r in detail.values()),
            "matcher": sum(r["source"] == "matcher" for r in detail.values()),
        },
        "lines": [
            {"qid": q, "subtopic": s, "docno": d, **detail[(q, s, d)]}
            for q, s, d, _ in (line.split() for line in lines)
        ],
    }
    return Export(lines=lines, provenance=provenance)


@dataclass
class AspectRow:
    """One aspect of a topic: its nuggets and the documents covering it."""

    id: str
    text: str
    nuggets: int
    judged: int
    inferred: int


@dataclass
class TopicAspects:
    """A topic's aspects for the job's topic page: per aspect the nuggets and covering
    documents, the aspects no nugget covers yet, and each covering document's aspects
    (judged first, then inferred, by docno; at most ``limit``)."""

    aspects: list[AspectRow]
    without_nuggets: list[str]
    documents: list[dict[str, Any]] = field(default_factory=list)
    more: int = 0


def topic_aspects(
    *, job: MatchJob, topic: Topic, threshold: float = 0.5, limit: int = 50
) -> TopicAspects:
    """Which aspects each judged or inferred document of ``topic`` covers in ``job``."""
    export = subtopics_export(
        collection=job.collection, job=job, threshold=threshold, topics=[topic]
    )
    lines = (export.provenance or {}).get("lines", [])
    tagged = Counter(
        Nugget.objects.filter(topic=topic)
        .exclude(aspect="")
        .values_list("aspect", flat=True)
    )
    known = {a.get("id", ""): a.get("text", "") for a in topic.aspects}
    for aspect in tagged:
        known.setdefault(aspect, "")
    covering: dict[str, dict[str, set[str]]] = {}
    docs: dict[tuple[str, str], set[str]] = {}
    for rec in lines:
        covering.setdefault(rec["subtopic"], {}).setdefault(rec["source"], set()).add(
            rec["docno"]
        )
        docs.setdefault((rec["source"], rec["docno"]), set()).add(rec["subtopic"])
    rows = [
        AspectRow(
            id=aspect,
            text=text,
            nuggets=tagged.get(aspect, 0),
            judged=len(covering.get(aspect, {}).get("person", ())),
            inferred=len(covering.get(aspect, {}).get("matcher", ())),
        )
        for aspect, text in sorted(known.items())
    ]
    ordered = sorted(docs.items(), key=lambda kv: (kv[0][0] != "person", kv[0][1]))
    return TopicAspects(
        aspects=rows,
        without_nuggets=[r.id for r in rows if r.nuggets == 0],
        documents=[
            {
                "docno": docno,
                "source": "judged" if source == "person" else "inferred",
                "aspects": sorted(aspects),
            }
            for (source, docno), aspects in ordered[:limit]
        ],
        more=max(len(ordered) - limit, 0),
    )
