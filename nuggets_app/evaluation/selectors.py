"""Reads shaped for the evaluation pages and commands: qrels, runs, scores, lengths.

Everything comes out keyed by ``qid`` and ``docno`` (the shapes ``nuggets_app.ir``
takes), never by primary key. A qrels *source* is named by a short key so pages can
carry it in a query string:

- ``human``: the people's judgments (``Judgment`` rows; the collection's aggregation
  rule when several assessors judged a document), exactly as ``export_qrels --kind
  human`` writes them;
- ``qrels:<id>``: imported qrels (or prels, relevance only; placeholders dropped);
- ``inferred:<job id>``: the matcher's decisions under a decision rule (relevant
  documents get the collection's relevant grade, the other scored documents 0);
- ``merged:<job id>``: inferred, with every human grade overriding the matcher's.

Without a rule, a job's decisions follow :func:`rule_default` (p >= 0.5 for a job with
a fitted relevance model, else the paper rule at 0.5). Probabilistic qrels (``qid ->
{docno: p}``) come from a job's model (:func:`job_probability_qrels`) or an imported
probabilistic file (:func:`stored_probabilities`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Count, Max, QuerySet

from nuggets_app.errors import DomainError
from nuggets_app.importers.qrels import (
    UNJUDGED_REL,
    parse_qrels_text,
)
from nuggets_app.inference.selectors import job_nuggets
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import prels_export, qrels_export
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.ir.prels import PLACEHOLDER_REL, TopicPrels, prels_load, topic_key
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    Adjudication,
    Collection,
    Document,
    JobInference,
    JobNewRun,
    Judgment,
    MatchJob,
    MatchResult,
    Nugget,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Sample,
    Topic,
)

QrelsDict = dict[str, dict[str, int]]
ProbQrels = dict[str, dict[str, float]]
Scores = dict[str, dict[str, float]]
JOB_KINDS = ("inferred", "merged")


class SourceError(DomainError):
    """A qrels source key that does not name anything usable; the message says why."""


def qrels_choices(collection: Collection) -> list[tuple[str, str]]:
    """``(key, label)`` of every qrels source of the collection, human first."""
    choices = [("human", "Human judgments")]
    for qrels in Qrels.objects.filter(collection=collection).order_by("name"):
        choices.append((f"qrels:{qrels.pk}", f"Imported {qrels.kind}: {qrels.name}"))
    for job in done_jobs(collection):
        choices.append((f"inferred:{job.pk}", f"Inferred by {job.label}"))
        choices.append((f"merged:{job.pk}", f"Merged human + {job.label}"))
    return choices


def done_jobs(collection: Collection) -> list[MatchJob]:
    """The collection's finished matching jobs, newest first."""
    return list(
        MatchJob.objects.filter(collection=collection, status=MatchJob.Status.DONE)
        .select_related("collection", "pool", "sample")
        .order_by("-pk")
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
        assert job is not None  # a job kind always names a job (or raised)
        if job.status != MatchJob.Status.DONE:
            raise SourceError(f"{key}: job {job.pk} is {job.status}, not done")
        export = qrels_export(
            collection=collection, kind=kind, job=job, rule=rule or rule_default(job)
        )
        return _export_qrels(export)
    raise SourceError(f"unknown qrels source {key!r}")


def _by_topic(rows: QuerySet) -> Scores:
    """``qid -> {docno: value}`` of (qid, docno, value) rows, read in chunks."""
    out: Scores = {}
    for qid, docno, value in rows.iterator():
        out.setdefault(qid, {})[docno] = value
    return out


def _export_qrels(export) -> QrelsDict:
    out: QrelsDict = {}
    for line in export.lines:
        qid, _, docno, rel = line.split()
        out.setdefault(qid, {})[docno] = int(rel)
    return out


def stored_qrels(qrels: Qrels) -> QrelsDict:
    """Imported qrels as ``qid -> {docno: rel}`` (prels placeholders and the unjudged
    lines of probabilistic qrels dropped; subtopic qrels give a document its best
    grade over the subtopics, as TREC's ad hoc qrels do)."""
    out: QrelsDict = {}
    rows = QrelsEntry.objects.filter(qrels=qrels).values_list(
        "topic__qid", "document__docno", "relevance", "probability"
    )
    for qid, docno, rel, p in rows.iterator():
        if rel == PLACEHOLDER_REL or (p is not None and rel == UNJUDGED_REL):
            continue
        topic = out.setdefault(qid, {})
        topic[docno] = max(rel, topic.get(docno, rel))
    return out


def stored_subtopic_qrels(qrels: Qrels) -> dict[str, dict[str, dict[str, int]]]:
    """Imported subtopic qrels as ``qid -> subtopic -> {docno: rel}``."""
    if qrels.kind != Qrels.Kind.SUBTOPICS:
        raise SourceError(f"qrels {qrels.name} are {qrels.kind}, not subtopics")
    out: dict[str, dict[str, dict[str, int]]] = {}
    rows = QrelsEntry.objects.filter(qrels=qrels).values_list(
        "topic__qid", "subtopic", "document__docno", "relevance"
    )
    for qid, subtopic, docno, rel in rows.iterator():
        out.setdefault(qid, {}).setdefault(subtopic, {})[docno] = rel
    return out


def stored_probabilities(qrels: Qrels) -> ProbQrels:
    """Imported probabilistic qrels as ``qid -> {docno: p}``."""
    if qrels.kind != Qrels.Kind.PROBABILISTIC:
        raise SourceError(f"qrels {qrels.name} are {qrels.kind}, not probabilistic")
    return _by_topic(
        QrelsEntry.objects.filter(qrels=qrels).values_list(
            "topic__qid", "document__docno", "probability"
        )
    )


def job_probability_qrels(job: MatchJob) -> ProbQrels:
    """``qid -> {docno: p}`` of a job's fitted model, human judgments overriding (1
    relevant, 0 not); raises SourceError when the job has no fitted model."""
    columns = job_probabilities(job=job)
    if not columns:
        raise SourceError(f"job {job.pk} has no fitted relevance model")
    qids = dict(Topic.objects.filter(pk__in=list(columns)).values_list("pk", "qid"))
    docnos = dict(
        Document.objects.filter(
            pk__in={d for docs, _ in columns.values() for d in docs.tolist()}
        ).values_list("pk", "docno")
    )
    return {
        qids[t]: {docnos[d]: v for d, v in zip(docs.tolist(), p.tolist(), strict=True)}
        for t, (docs, p) in columns.items()
    }


def collection_runs(
    collection: Collection,
    names: Iterable[str] | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Scores]:
    """``run name -> qid -> {docno: score}`` of the collection's runs, by name;
    ``progress(runs read, runs)`` after each run."""
    runs = list(Run.objects.filter(collection=collection).order_by("name"))
    if names is not None:
        wanted = set(names)
        runs = [run for run in runs if run.name in wanted]
    out = {}
    for done, run in enumerate(runs, 1):
        out[run.name] = run_scores(run)
        if progress is not None:
            progress(done, len(runs))
    return out


def run_scores(run: Run) -> Scores:
    """One stored run as ``qid -> {docno: score}``."""
    return _by_topic(
        RunEntry.objects.filter(run=run).values_list(
            "topic__qid", "document__docno", "score"
        )
    )


def sample_prels(sample: Sample) -> dict[str, TopicPrels]:
    """The sample's judged documents with their inclusion probabilities, loaded for
    statAP: the same lines ``export_qrels --kind prels`` writes, parsed back."""
    export = prels_export(sample=sample)
    records = list(
        parse_qrels_text(export.lines, "prels", source=f"sample {sample.name}")
    )
    prels = prels_load(records, source=f"sample {sample.name}")
    provenance = export.provenance or {}
    if "lines" in provenance:  # a sample in rounds: its variance factors
        for record, extra in zip(records, provenance["lines"], strict=True):
            if record.qid in prels and extra["var_weight"] is not None:
                prels[record.qid].var_weight[record.docno] = extra["var_weight"]
    return prels


def statap_samples(collection: Collection) -> list[Sample]:
    """Samples of the collection's pools that draw with inclusion probabilities."""
    return list(
        Sample.objects.filter(pool__collection=collection)
        .exclude(method__in=Sample.NOT_STATAP)
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
    return _by_topic(
        MatchResult.objects.filter(job=job).values_list(
            "topic__qid", "document__docno", "score"
        )
    )


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


# --- versions: what the dashboard's kept results are keyed by ---------------------------
# Each is a few plain values that change whenever the data they stand for changes, read
# with one small query (never the rows themselves), so checking them costs milliseconds.
def collection_version(collection: Collection) -> list:
    """The collection itself: its creation time tells apart a collection re-created
    under the same id (another database, a test run), its threshold and aggregation
    rule the labels."""
    return [
        "collection",
        collection.pk,
        str(collection.created_at),
        collection.relevance_level,
        sorted((collection.aggregation or {}).items()),
    ]


def judgments_version(collection: Collection) -> list:
    """People's judgments of the collection, and the adjudicated decisions beside
    them: count, last id, last change of each."""
    stats = Judgment.objects.filter(topic__collection=collection).aggregate(
        n=Count("pk"), last=Max("pk"), changed=Max("updated_at")
    )
    decided = Adjudication.objects.filter(topic__collection=collection).aggregate(
        n=Count("pk"), last=Max("pk"), changed=Max("updated_at")
    )
    return [
        "judgments",
        stats["n"],
        stats["last"],
        str(stats["changed"]),
        [decided["n"], decided["last"], str(decided["changed"])],
    ]


def nuggets_version(collection: Collection) -> list:
    """Nuggets of the collection (the trust page's nugget sources)."""
    stats = Nugget.objects.filter(topic__collection=collection).aggregate(
        n=Count("pk"), last=Max("pk"), changed=Max("updated_at")
    )
    return ["nuggets", stats["n"], stats["last"], str(stats["changed"])]


def documents_version(collection: Collection) -> list:
    """Documents of the collection (their lengths feed the length-bias tables)."""
    stats = Document.objects.filter(collection=collection).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    return ["documents", stats["n"], stats["last"]]


def runs_version(collection: Collection) -> list:
    """Every stored run of the collection: id, name and last (re-)import."""
    runs = Run.objects.filter(collection=collection).order_by("name")
    return ["runs", *(list(r) for r in runs.values_list("pk", "name", "updated_at"))]


def job_version(job: MatchJob) -> list:
    """A matching job: its results change with its status, lambda and progress, its
    model's fit and the new runs kept for it."""
    fitted = JobInference.objects.filter(job=job).values_list("fitted_at", flat=True)
    kept = JobNewRun.objects.filter(job=job).values_list("name", "created_at")
    return [
        "job",
        job.pk,
        job.status,
        job.lam,
        job.docs_done,
        str(job.finished_at),
        str(fitted.first()),
        [[n, str(t)] for n, t in kept],
    ]


def job_inputs_version(job: MatchJob) -> list:
    """Everything a job page's figures read: the job (results, fit, new runs), the
    collection's judgments, nuggets and runs, and the samples of its pool."""
    collection = job.collection
    pool_id = job.pool_id or (job.sample.pool_id if job.sample_id else None)
    samples = Sample.objects.filter(pool_id=pool_id).order_by("pk")
    return [
        collection_version(collection),
        job_version(job),
        judgments_version(collection),
        nuggets_version(collection),
        runs_version(collection),
        ["samples", *(list(r) for r in samples.values_list("pk", "size"))],
    ]


def source_version(collection: Collection, key: str) -> list:
    """The version of the qrels source named by ``key`` (module docstring)."""
    kind, _, ident = key.partition(":")
    level = collection_version(collection)
    if kind == "human":
        return [key, level, judgments_version(collection)]
    if kind == "qrels":
        qrels = Qrels.objects.filter(collection=collection, pk=_int(key, ident)).first()
        if qrels is None:
            raise SourceError(f"{key}: no qrels {ident} in {collection.name}")
        return [key, level, str(qrels.updated_at)]
    if kind in JOB_KINDS:
        job = source_job(collection, key)
        assert job is not None  # a job kind always names a job (or raised)
        human = judgments_version(collection) if kind == "merged" else []
        return [key, level, job_version(job), human]
    raise SourceError(f"unknown qrels source {key!r}")


@dataclass
class TopicModelView:
    """What the job topic page shows of the model for one topic."""

    fitted: bool
    sum_p: float | None = None
    unjudged: list[tuple[int, float]] | None = None  # (document id, p), p descending
    docs: Any = None  # the topic's document ids (numpy), with ...
    p: Any = None  # ... the model's p of each (not overridden by judgments)

    def p_of(self, doc_ids: Iterable[int]) -> dict[int, float]:
        """The model's p of ``doc_ids`` (those it gives one)."""
        if self.docs is None:
            return {}
        wanted = np.fromiter(doc_ids, dtype=np.int64)
        where = np.flatnonzero(np.isin(self.docs, wanted))
        return dict(zip(self.docs[where].tolist(), self.p[where].tolist(), strict=True))

    r_hat: list[tuple[str, float]] | None = None  # (sample name, statAP R-hat)


def topic_model_view(*, job: MatchJob, topic: Topic, limit: int = 25) -> TopicModelView:
    """The topic's sum of p (human judgments overriding), its unjudged documents by
    p, and the statAP R-hat of each statAP sample over the job's pool."""
    r_hat = []
    pool_id = job.pool_id or (job.sample.pool_id if job.sample_id else None)
    for sample in statap_samples(job.collection):
        if sample.pool_id == pool_id:
            prels = sample_prels(sample).get(topic.qid)
            r_hat.append((sample.name, prels.est_r if prels is not None else 0.0))
    raw = job_probabilities(job=job, override=False, topics=[topic.pk])
    if topic.pk not in raw:
        return TopicModelView(fitted=False, r_hat=r_hat)
    docs, p = raw[topic.pk]
    merged = job_probabilities(job=job, topics=[topic.pk])[topic.pk][1]
    judged = [d for t, d in human_grades([topic.pk]) if t == topic.pk]
    # The best ``limit`` unjudged by p, then document id, without sorting them all.
    open_ = ~np.isin(docs, np.asarray(judged, dtype=docs.dtype))
    order = np.lexsort((docs[open_], -p[open_]))[:limit]
    unjudged = list(
        zip(docs[open_][order].tolist(), p[open_][order].tolist(), strict=True)
    )
    return TopicModelView(
        fitted=True,
        sum_p=float(merged.sum()),
        unjudged=unjudged,
        docs=docs,
        p=p,
        r_hat=r_hat,
    )
