"""Reads shaped for the evaluation pages and commands: qrels, runs, scores, lengths.

Everything comes out keyed by ``qid`` and ``docno`` (the shapes ``nuggets_app.ir``
takes), never by primary key. A qrels *source* is named by a short key so pages can
carry it in a query string:

- ``human``: the people's judgments (``Judgment`` rows; the highest grade when several
  assessors judged a document), exactly as ``export_qrels --kind human`` writes them;
- ``qrels:<id>``: imported qrels (or prels, relevance only; placeholders dropped);
- ``inferred:<job id>``: the matcher's decisions under a decision rule (relevant
  documents get the collection's relevant grade, the other scored documents 0);
- ``merged:<job id>``: inferred, with every human grade overriding the matcher's.
"""

from __future__ import annotations

from collections.abc import Iterable

from nuggets_app.importers.qrels import PLACEHOLDER_REL
from nuggets_app.ir.prels import TopicPrels, prels_load, prels_parse, topic_key
from nuggets_app.models import (
    Collection,
    Document,
    MatchJob,
    MatchResult,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Sample,
)
from nuggets_app.services.exports import prels_export, qrels_export
from nuggets_app.services.inference import DecisionRule
from nuggets_app.services.matching import job_nuggets

QrelsDict = dict[str, dict[str, int]]
Scores = dict[str, dict[str, float]]
JOB_KINDS = ("inferred", "merged")


class SourceError(ValueError):
    """A qrels source key that does not name anything usable; the message says why."""


def qrels_choices(collection: Collection) -> list[tuple[str, str]]:
    """``(key, label)`` of every qrels source of the collection, human first."""
    choices = [("human", "Human judgments")]
    for qrels in Qrels.objects.filter(collection=collection).order_by("name"):
        choices.append((f"qrels:{qrels.pk}", f"Imported {qrels.kind}: {qrels.name}"))
    for job in done_jobs(collection):
        choices.append((f"inferred:{job.pk}", f"Inferred by job {job.pk} {job.name}"))
        choices.append((f"merged:{job.pk}", f"Merged human + job {job.pk} {job.name}"))
    return choices


def done_jobs(collection: Collection) -> list[MatchJob]:
    """The collection's finished matching jobs, newest first."""
    return list(
        MatchJob.objects.filter(
            collection=collection, status=MatchJob.Status.DONE
        ).order_by("-pk")
    )


def source_job(collection: Collection, key: str) -> MatchJob | None:
    """The job a source key refers to (``inferred:``/``merged:``), else None."""
    kind, _, ident = key.partition(":")
    if kind not in JOB_KINDS:
        return None
    job = MatchJob.objects.filter(collection=collection, pk=_int(key, ident)).first()
    if job is None:
        raise SourceError(f"{key}: no matching job {ident} in {collection.name}")
    return job


def _int(key: str, text: str) -> int:
    if not text.isdigit():
        raise SourceError(f"{key}: expected a number after the colon")
    return int(text)


def qrels_resolve(
    *, collection: Collection, key: str, rule: DecisionRule | None = None
) -> QrelsDict:
    """``qid -> {docno: rel}`` of the source named by ``key`` (module docstring)."""
    kind, _, ident = key.partition(":")
    if kind == "human":
        return _export_qrels(qrels_export(collection=collection, kind="human"))
    if kind == "qrels":
        qrels = Qrels.objects.filter(collection=collection, pk=_int(key, ident)).first()
        if qrels is None:
            raise SourceError(f"{key}: no qrels {ident} in {collection.name}")
        return stored_qrels(qrels)
    if kind in JOB_KINDS:
        job = source_job(collection, key)
        if job.status != MatchJob.Status.DONE:
            raise SourceError(f"{key}: job {job.pk} is {job.status}, not done")
        export = qrels_export(
            collection=collection, kind=kind, job=job, rule=rule or DecisionRule()
        )
        return _export_qrels(export)
    raise SourceError(f"unknown qrels source {key!r}")


def _export_qrels(export) -> QrelsDict:
    out: QrelsDict = {}
    for line in export.lines:
        qid, _, docno, rel = line.split()
        out.setdefault(qid, {})[docno] = int(rel)
    return out


def stored_qrels(qrels: Qrels) -> QrelsDict:
    """Imported qrels as ``qid -> {docno: rel}`` (prels placeholders dropped)."""
    out: QrelsDict = {}
    rows = QrelsEntry.objects.filter(qrels=qrels).values_list(
        "topic__qid", "document__docno", "relevance"
    )
    for qid, docno, rel in rows.iterator():
        if rel != PLACEHOLDER_REL:
            out.setdefault(qid, {})[docno] = rel
    return out


def collection_runs(
    collection: Collection, names: Iterable[str] | None = None
) -> dict[str, Scores]:
    """``run name -> qid -> {docno: score}`` of the collection's runs, by name."""
    runs = Run.objects.filter(collection=collection).order_by("name")
    if names is not None:
        runs = runs.filter(name__in=list(names))
    return {run.name: run_scores(run) for run in runs}


def run_scores(run: Run) -> Scores:
    """One stored run as ``qid -> {docno: score}``."""
    scores: Scores = {}
    rows = RunEntry.objects.filter(run=run).values_list(
        "topic__qid", "document__docno", "score"
    )
    for qid, docno, score in rows.iterator():
        scores.setdefault(qid, {})[docno] = score
    return scores


def sample_prels(sample: Sample) -> dict[str, TopicPrels]:
    """The sample's judged documents with their inclusion probabilities, loaded for
    statAP: the same lines ``export_qrels --kind prels`` writes, parsed back."""
    export = prels_export(sample=sample)
    records = prels_parse(export.lines, source=f"sample {sample.name}")
    return prels_load(records, source=f"sample {sample.name}")


def statap_samples(collection: Collection) -> list[Sample]:
    """Samples of the collection's pools that draw with inclusion probabilities."""
    return list(
        Sample.objects.filter(pool__collection=collection)
        .exclude(method=Sample.Method.VERIFICATION)
        .select_related("pool")
        .order_by("pool__name", "name")
    )


def document_lengths(collection: Collection, *, unit: str = "words") -> dict[str, int]:
    """``docno -> length`` of every document (``words`` or ``chars``)."""
    field = {"words": "length_words", "chars": "length_chars"}[unit]
    return dict(
        Document.objects.filter(collection=collection).values_list("docno", field)
    )


def job_scores(job: MatchJob) -> Scores:
    """``qid -> {docno: match score}`` of every result of the job."""
    out: Scores = {}
    rows = MatchResult.objects.filter(job=job).values_list(
        "topic__qid", "document__docno", "score"
    )
    for qid, docno, score in rows.iterator():
        out.setdefault(qid, {})[docno] = score
    return out


def nugget_sources(job: MatchJob) -> dict[str, set[str]]:
    """``qid -> docnos`` the job's nuggets were highlighted in (its filter applied)."""
    out: dict[str, set[str]] = {}
    for topic in job.topics.all():
        docnos = job_nuggets(job, topic.pk).values_list("document__docno", flat=True)
        out[topic.qid] = set(docnos)
    return out


def held_out_labels(
    job: MatchJob, judgments: QrelsDict, *, level: int
) -> dict[str, dict[str, int]]:
    """Binary labels of the job's scored documents that were judged but did not give
    a nugget: ``qid -> {docno: 1 if rel >= level else 0}``, topics in numeric order."""
    sources = nugget_sources(job)
    scored = job_scores(job)
    out: dict[str, dict[str, int]] = {}
    for qid in sorted(scored, key=topic_key):
        judged = judgments.get(qid, {})
        labels = {
            docno: int(judged[docno] >= level)
            for docno in scored[qid]
            if docno in judged and docno not in sources.get(qid, set())
        }
        if labels:
            out[qid] = labels
    return out


def flat_judgments(qrels: QrelsDict) -> dict[tuple[str, str], int]:
    """``(qid, docno) -> rel`` (the shape the length-bias functions take)."""
    return {(q, d): rel for q, docs in qrels.items() for d, rel in docs.items()}
