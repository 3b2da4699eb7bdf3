"""Exports in the formats evaluation tools read, deterministic byte for byte.

- qrels (``qid 0 docno rel``): human judgments, inferred judgments (a job plus a
  decision rule, on every document of the job), or merged (human grades override
  inferred ones); each with a
  provenance sidecar (JSON: job, parameters, rule, counts, and per line whether a
  person or the matcher decided, with the matching nugget);
- probabilistic qrels (``qid docno rel p pi source``): every document of a job with
  its probability of relevance (human grade and p = 1/0 where judged), with a sidecar
  naming the model (:func:`probabilistic_export`);
- scores (``qid docno score nugget``): every result of a job;
- prels (``qid docno rel method inclusion_prob``): a sample's judged documents, for
  statAP (method 1 = drawn by the sampler, 0 = judged with certainty by design);
- passage qrels (``qid docno start length``): one line per distinct nugget span.

trec_eval conventions: four columns, integer grades, no topic without lines, lines
sorted by qid (numeric qids in numeric order, so every topic is contiguous) then docno.
A human grade for a document several assessors judged is the human label under an
aggregation rule (the collection's, or the export's ``aggregation``;
:mod:`nuggets_app.judging.selectors.labels`), which every sidecar names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nuggets_app.collection.selectors import docnos_by_id
from nuggets_app.errors import DomainError
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.export_provenance import job_info, model_info
from nuggets_app.inference.services.job_model import fit_sample, job_probabilities
from nuggets_app.inference.services.readiness import (
    job_has_model,
    model_missing_reason,
    rule_on_model,
    rule_undecided_reasons,
    undecided_warnings,
)
from nuggets_app.inference.services.rule_application import rule_apply, rule_apply_later
from nuggets_app.inference.services.unpooled import later_columns
from nuggets_app.ir.aggregation import Aggregation
from nuggets_app.judging.selectors import human_grades
from nuggets_app.judging.selectors.labels import (
    HumanLabel,
    aggregation_of,
    human_labels,
    known_answer_checks,
)
from nuggets_app.models import (
    Collection,
    Document,
    MatchJob,
    MatchResult,
    Nugget,
    Sample,
    SampleDocument,
    Topic,
    UnpooledScore,
)

QRELS_KINDS = ("human", "inferred", "merged")
# What each qrels kind holds, as the job page, export_qrels --help and every sidecar
# (``contents``) say it.
QRELS_CONTENTS = {
    "human": "people's judgments (several assessors on one document: the "
    "collection's aggregation rule)",
    "inferred": "the decision rule's call on every document of the job, judged ones "
    "included (the sidecar puts the people's grade beside each judged line): the "
    "job's own qrels, to compare with people's",
    "merged": "people's grades wherever someone judged, the decision rule's call on "
    "every other document of the job: the qrels to evaluate with",
}
PROBABILISTIC_COLUMNS = "qid docno rel p pi source"


class ExportError(DomainError):
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
        """Write the file, and ``<path>.provenance.json`` when there is provenance:
        both streamed, so a large export is never held twice (as the lines and as
        one string)."""
        path = Path(path)
        with path.open("w", encoding="utf-8") as handle:
            for line in self.lines:
                handle.write(f"{line}\n")
        written = [path]
        if self.provenance is not None:
            side = path.with_name(path.name + ".provenance.json")
            with side.open("w", encoding="utf-8") as handle:
                encoder = json.JSONEncoder(sort_keys=True, indent=1)
                for part in encoder.iterencode(self.provenance):
                    handle.write(part)
                handle.write("\n")
            written.append(side)
        return written


def _line_key(row: tuple) -> tuple:
    return (qid_key(row[0]), row[1])


# --- qrels ------------------------------------------------------------------------------
def job_check_done(job: MatchJob, collection: Collection) -> None:
    """``ExportError`` unless ``job`` is a finished job of ``collection``."""
    if job.collection_id != collection.pk:
        raise ExportError(f"job {job.pk} is not a job of {collection.name}")
    if job.status != MatchJob.Status.DONE:
        raise ExportError(f"job {job.pk} is {job.status}, not done")


def qrels_export(
    *,
    collection: Collection,
    kind: str = "human",
    job: MatchJob | None = None,
    rule: DecisionRule | None = None,
    topics: Iterable[Topic] | None = None,
    later: bool = False,
    aggregation: Aggregation | None = None,
) -> Export:
    """TREC qrels of human, inferred or merged judgments, with provenance.

    ``aggregation``: how several assessors' grades become the human grade (the
    collection's rule when None); the sidecar names it.
    Inferred qrels are the job's documents under ``rule``, judged ones included (the
    rule's call; each judged line's sidecar entry has the person's label beside it,
    ``person``). Merged qrels give every judged document, in the job's results or
    not, the people's grade (source ``person``), so they never contradict an
    assessor (:data:`QRELS_CONTENTS`).

    ``later``: inferred and merged qrels also decide the documents scored for the job
    after it ran (documents added to the collection, new runs' unpooled documents;
    :func:`nuggets_app.inference.services.rule_application.rule_apply_later`), their lines
    marked ``"later": true`` in the sidecar."""
    if kind not in QRELS_KINDS:
        raise ExportError(
            f"qrels kind must be one of {', '.join(QRELS_KINDS)}, got {kind!r}"
        )
    if kind != "human":
        if job is None or rule is None:
            raise ExportError(f"{kind} qrels need a matching job and a decision rule")
        job_check_done(job, collection)
    topic_qs = Topic.objects.filter(collection=collection)
    if topics is not None:
        topic_qs = topic_qs.filter(pk__in=[t.pk for t in topics])
    if job is not None and kind != "human":
        topic_qs = topic_qs.filter(match_jobs=job)
    qids = dict(topic_qs.values_list("pk", "qid"))
    records: dict[tuple[int, int], dict[str, Any]] = {}
    reasons: dict[str, str] = {}
    rule_used = aggregation or aggregation_of(collection)
    # The people's labels, read once: the lines' and, under the collection's own
    # rule, which topics are judged (the readiness of the rule's topics).
    labels = human_labels(qids, aggregation=rule_used)
    if kind in ("inferred", "merged"):
        assert job is not None
        assert rule is not None
        own = rule_used == aggregation_of(collection)
        reasons = rule_undecided_reasons(
            job, rule, topic_ids=list(qids), labels=labels if own else None
        )
        decided = {t: q for t, q in qids.items() if q not in reasons}
        records.update(_inferred_records(job, rule, collection, decided, later))
    undecided = sorted(reasons, key=qid_key)
    _add_human_records(records, _human_records(labels), kind)
    docnos = docnos_by_id(collection=collection, ids={d for _, d in records})
    # What people said of a line's document as a check of a known answer (no label).
    for key, checks in known_answer_checks(qids).items():
        if key in records:
            records[key] = {**records[key], "checks": checks}
    rows = sorted(
        ((qids[t], docnos[d], rec) for (t, d), rec in records.items()), key=_line_key
    )
    lines = [f"{qid} 0 {docno} {rec['rel']}" for qid, docno, rec in rows]
    level = _level(collection, job if kind != "human" else None)
    provenance = {
        "format": "trec-qrels",
        "columns": "qid iter docno rel",
        "kind": kind,
        "contents": QRELS_CONTENTS[kind],
        "collection": collection.name,
        "relevance_level": level,
        "relevance": f"relevant at grade >= {level}",
        "aggregation": rule_used.as_dict(),
        "job": job_info(job) if kind != "human" else None,
        "rule": rule.as_dict() if rule is not None and kind != "human" else None,
        "rule_text": rule.describe() if rule is not None and kind != "human" else None,
        "undecided_topics": undecided,
        "undecided_reasons": {q: reasons[q] for q in undecided},
        "warnings": undecided_warnings(reasons)
        + _aggregation_warnings(collection, rule_used, kind),
        "model": model_info(job)
        if kind != "human" and rule_uses_p(job, rule)
        else None,
        "counts": {
            **_counts(rows, level),
            "later": sum(1 for *_, rec in rows if rec.get("later")),
            **(_judged_counts(rows, level) if kind == "inferred" else {}),
            "checked": sum(1 for *_, rec in rows if rec.get("checks")),
        },
        # Each record becomes its sidecar line in place (a second dict per line is
        # the largest cost of a large export; the sidecar sorts its keys).
        "lines": [_sidecar_line(rec, q, d) for q, d, rec in rows],
    }
    return Export(lines=lines, provenance=provenance)


def _add_human_records(
    records: dict[tuple[int, int], dict[str, Any]],
    human: dict[tuple[int, int], dict[str, Any]],
    kind: str,
) -> None:
    """Human and merged qrels take the people's label; inferred lines stay the
    rule's own, judged documents too, with the person's label beside them in the
    sidecar (merged lets it decide)."""
    if kind in ("human", "merged"):
        records.update(human)
        return
    for key, rec in human.items():
        if key in records:
            person = {k: rec[k] for k in ("rel", "assessors", "how")}
            records[key] = {**records[key], "person": person}


def _sidecar_line(rec: dict[str, Any], qid: str, docno: str) -> dict[str, Any]:
    rec["qid"] = qid
    rec["docno"] = docno
    return rec


def _level(collection: Collection, job: MatchJob | None) -> int:
    """The relevance level of an export: the job's, else the collection's."""
    return job.relevance_level if job is not None else collection.relevance_level


def rule_uses_p(job: MatchJob | None, rule: DecisionRule | None) -> bool:
    """Whether the export's decisions come from the job's relevance model."""
    return job is not None and rule is not None and rule_on_model(job, rule)


def _human_records(
    labels: dict[tuple[int, int], HumanLabel],
) -> dict[tuple[int, int], dict[str, Any]]:
    """The lines of the people's labels (per (topic, document)), with the assessors
    who gave each (the adjudicator for an adjudicated one) and the rule that decided
    it (``how``)."""
    return {
        key: {
            "rel": label.grade,
            "source": "person",
            "assessors": list(label.assessors),
            "how": label.how,
        }
        for key, label in labels.items()
    }


def _aggregation_warnings(
    collection: Collection, aggregation: Aggregation, kind: str
) -> list[str]:
    """A merged export under another rule than the collection's: its inferred
    lines come from a model fitted on the collection's labels."""
    own = aggregation_of(collection)
    if kind != "merged" or own == aggregation:
        return []
    return [
        f"the human lines follow {aggregation.rule!r}; the inferred lines come from "
        f"a job fitted on the collection's rule ({own.describe()})"
    ]


def _inferred_records(
    job: MatchJob,
    rule: DecisionRule,
    collection: Collection,
    qids: dict[int, str],
    later: bool = False,
) -> dict[tuple[int, int], dict[str, Any]]:
    grade = job.relevance_level
    on_model = rule_on_model(job, rule)
    if on_model and not job_has_model(job):  # a rule on p with no p at all
        raise ExportError(f"rule {rule.describe()!r}: {model_missing_reason(job)}")
    out = {}
    # One topic at a time: its decisions, p and result rows are dropped before the
    # next topic's are read.
    for topic in Topic.objects.filter(pk__in=list(qids)).order_by("pk"):
        decisions = rule_apply(job=job, rule=rule, topics=[topic])
        decided = decisions.get(topic.pk, {})
        model_p: dict[int, float] = {}
        if on_model:
            for docs, p in job_probabilities(
                job=job, override=False, topics=[topic.pk]
            ).values():
                model_p = dict(zip(docs.tolist(), p.tolist(), strict=True))
        rows = MatchResult.objects.filter(job=job, topic=topic).values_list(
            "document_id", "score", "nugget_id"
        )
        for doc_id, score, nugget in rows.iterator(chunk_size=20000):
            if doc_id not in decided:
                continue
            rec: dict[str, Any] = {
                "rel": grade if decided[doc_id] else 0,
                "source": "model" if model_p else "matcher",
                "score": score,
                "nugget": nugget,
            }
            if model_p:
                rec["p"] = model_p.get(doc_id)
            out[(topic.pk, doc_id)] = rec
    if later:
        out.update(_later_records(job, rule, qids, grade))
    return out


def _later_records(
    job: MatchJob, rule: DecisionRule, qids: dict[int, str], grade: int
) -> dict[tuple[int, int], dict[str, Any]]:
    """Inferred records of the documents scored after the job ran."""
    decisions = rule_apply_later(job=job, rule=rule, topics=list(qids))
    on_model = rule_on_model(job, rule)
    rows = UnpooledScore.objects.filter(
        job=job, topic_id__in=list(decisions)
    ).values_list("topic_id", "document_id", "score", "nugget_id")
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for topic_id, doc_id, score, nugget in rows.iterator():
        decided = decisions[topic_id].get(doc_id)
        if decided is None:
            continue
        relevant, value = decided
        rec: dict[str, Any] = {
            "rel": grade if relevant else 0,
            "source": "model" if on_model else "matcher",
            "score": score,
            "nugget": nugget,
            "later": True,
        }
        if on_model:
            rec["p"] = value
        out[(topic_id, doc_id)] = rec
    return out


def probabilistic_export(
    *, job: MatchJob, topics: Iterable[Topic] | None = None, later: bool = False
) -> Export:
    """Probabilistic qrels, one line per (topic, document) of the job:
    ``qid docno rel p pi source`` with ``rel`` the human grade (-1 when unjudged),
    ``p`` the probability of relevance (1 or 0 where a person judged, the model's
    elsewhere), ``pi`` the inclusion probability of the job's sample (-1 when the job
    is not over a sample or the document was not drawn) and ``source`` human, model
    or later; with a sidecar naming the model, its features, coefficients and
    calibration. ``later``: also the documents scored for the job after it ran,
    with the model's p beside the pool (pi -1: never drawn; source ``later``)."""
    if job.status != MatchJob.Status.DONE:
        raise ExportError(f"job {job.pk} is {job.status}, not done")
    topic_qs = Topic.objects.filter(match_jobs=job)
    if topics is not None:
        topic_qs = topic_qs.filter(pk__in=[t.pk for t in topics])
    qids = dict(topic_qs.values_list("pk", "qid"))
    columns = job_probabilities(job=job, override=False, topics=qids)
    if not columns:
        raise ExportError(model_missing_reason(job))
    later_keys = _add_later_columns(job, columns, qids) if later else set()
    level = job.relevance_level
    rule_used = aggregation_of(job.collection)
    grades = human_grades(qids, aggregation=rule_used)
    inclusion = _fit_inclusion(job, qids)
    docnos = docnos_by_id(
        collection=job.collection,
        ids={d for docs, _ in columns.values() for d in docs.tolist()},
    )
    rows = []
    for topic_id, (docs, p) in columns.items():
        for doc_id, model_p in zip(docs.tolist(), p.tolist(), strict=True):
            grade = grades.get((topic_id, doc_id))
            if grade is None:
                later_doc = (topic_id, doc_id) in later_keys
                rel, value, source = -1, model_p, "later" if later_doc else "model"
            else:
                rel, value, source = grade, float(grade >= level), "human"
            pi = inclusion.get((topic_id, doc_id), -1)
            rows.append((qids[topic_id], docnos[doc_id], rel, value, pi, source))
    rows.sort(key=_line_key)
    said = {
        (qids[t], docnos.get(d)): c for (t, d), c in known_answer_checks(qids).items()
    }
    checked = [
        {"qid": q, "docno": d, "checks": said[q, d]}
        for q, d, *_ in rows
        if (q, d) in said
    ]
    lines = [
        f"{q} {d} {rel} {value!r} {pi!r} {source}"
        for q, d, rel, value, pi, source in rows
    ]
    by_source = {"human": 0, "model": 0, "later": 0}
    for row in rows:
        by_source[row[5]] += 1
    provenance = {
        "format": "probabilistic-qrels",
        "columns": PROBABILISTIC_COLUMNS,
        "collection": job.collection.name,
        "relevance_level": level,
        "aggregation": rule_used.as_dict(),
        "job": job_info(job),
        "model": model_info(job),
        "undecided_topics": sorted(
            (q for t, q in qids.items() if t not in columns), key=qid_key
        ),
        "counts": {
            "lines": len(rows),
            "topics": len({r[0] for r in rows}),
            **by_source,
            "expected_relevant": sum(r[3] for r in rows),
            "checked": len(checked),
        },
        "checks": checked,
        "notes": (
            "rel is the human grade under the aggregation rule, -1 when nobody "
            "judged the document; "
            "p is 1 or 0 where a person judged (human judgments override), else the "
            "model's probability of relevance; pi is -1 when unknown (and for the "
            "documents scored after the job, whose source is later: never drawn, "
            "their p from the job's model); checks: the grades people gave a line's "
            "document as a check of a known answer, never labels"
        ),
    }
    return Export(lines=lines, provenance=provenance)


def _add_later_columns(
    job: MatchJob, columns: dict[int, tuple[Any, Any]], qids: dict[int, str]
) -> set[tuple[int, int]]:
    """Append the documents scored after the job ran to ``columns`` (the model's p
    beside the pool's); answers their (topic, document) keys."""
    added = later_columns(job=job, on_model=True, topics=list(qids))
    for topic_id, (docs, p) in added.items():
        pooled_docs, pooled_p = columns.get(topic_id, (docs[:0], p[:0]))
        columns[topic_id] = (
            np.concatenate([pooled_docs, docs]),
            np.concatenate([pooled_p, p]),
        )
    return {(t, d) for t, (docs, _) in added.items() for d in docs.tolist()}


def _fit_inclusion(job: MatchJob, qids: dict[int, str]) -> dict[tuple[int, int], float]:
    """Inclusion probabilities of the sample the job's model was fitted with."""
    design = fit_sample(job)
    if design is None:
        return {}
    return {
        (t, d): p
        for t, d, p in SampleDocument.objects.filter(
            sample=design, topic_id__in=list(qids)
        ).values_list("topic_id", "document_id", "inclusion_prob")
    }


def _counts(rows: list[tuple], level: int) -> dict[str, Any]:
    by_source: dict[str, int] = {}
    for _, _, rec in rows:
        by_source[rec["source"]] = by_source.get(rec["source"], 0) + 1
    return {
        "lines": len(rows),
        "topics": len({q for q, _, _ in rows}),
        "relevant": sum(rec["rel"] >= level for _, _, rec in rows),
        "person": by_source.get("person", 0),
        "matcher": by_source.get("matcher", 0),
        **({"model": by_source["model"]} if "model" in by_source else {}),
    }


def _judged_counts(rows: list[tuple], level: int) -> dict[str, int]:
    """Inferred qrels: lines of judged documents, and those whose relevance at the
    level differs from the people's."""
    judged = [rec for _, _, rec in rows if "person" in rec]
    return {
        "judged": len(judged),
        "disagree": sum(
            (rec["rel"] >= level) != (rec["person"]["rel"] >= level) for rec in judged
        ),
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
    stored = SampleDocument.objects.filter(sample=sample).values_list(
        "topic_id", "document_id", "inclusion_prob", "round", "round_prob", "var_weight"
    )
    sampled = {(t, d): p for t, d, p, *_ in stored}
    rounds = {(t, d): (r, rp, v) for t, d, _, r, rp, v in stored}
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
    if sample.judge is not None:  # which judge shaped the design (ir.judge_sampling)
        design = "statap steered by a judge, exact inclusion probabilities"
        steered = {"sample": sample.name, "design": design, "judge": sample.judge.name}
        return Export(lines, {**steered, "judge_weight": sample.judge_weight})
    if sample.rounds <= 1:
        return Export(lines=lines)
    # A sample in rounds (docs/explanation/rounds.md): the column is the effective
    # inclusion probability 1/w; the sidecar keeps each line's round, its conditional
    # probability in that round and its variance factor.
    by_name = {(qids[t], docnos[d]): rounds[(t, d)] for t, d in grades}
    provenance = {
        "sample": sample.name,
        "rounds": sample.rounds,
        "rounds_drawn": sample.rounds_drawn,
        "budgets": {q: r.get("budgets") for q, r in sample.draws.items()},
        "lines": [
            {"round": r, "round_prob": rp, "var_weight": v}
            for r, rp, v in (by_name[(q, d)] for q, d, _, _ in rows)
        ],
    }
    return Export(lines=lines, provenance=provenance)


def passages_export(
    *, collection: Collection, topics: Iterable[Topic] | None = None
) -> Export:
    """``qid docno start length`` for every distinct nugget source span (character
    offsets into the canonical text)."""
    # Imported nuggets without a source document have no span to export.
    qs = Nugget.objects.filter(topic__collection=collection, document__isnull=False)
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
