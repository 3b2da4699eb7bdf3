"""The relevance model inside matching jobs: features, corpus statistics, fits, p.

Beside its min-span evidence, every chunk stores the raw features
(``nuggets_app.learning.relevance_features.FEATURE_NAMES``) of each of its (topic,
document) pairs, packed (``MatchChunk.packed_features``). When the job's chunks are done (and on
demand), :func:`job_model_fit` fits the model on the judged documents and stores, with
the job (``JobInference``), the model JSON and the model's probability of relevance of
every (topic, document) of the job. A fit reads only the packed features and the
judgments, never a document's text; with the semantic extra and the job's embeddings
stored, it appends the semantic features computed from the stored vectors
(:mod:`.job_semantic`), and it keeps the nugget features only where the job's own
held-out log-loss says they pay (:mod:`nuggets_app.learning.family_choice`).

Documents are read with their titles and topics by their statement
(:func:`topic_statement`). BM25 corpus statistics (document count, mean length, document
frequencies) are the job's: computed once, over every document the job matches (the
union of its chunks' documents: the pool, the sample or the collection), in parts the
workers share before their first chunk scores
(:mod:`nuggets_app.inference.services.corpus_stats`), so every chunk scores with the
same statistics. The topic evidence (statement, nuggets, judged documents and the
tokens of judged relevant ones) is read when a worker first scores a topic of the job:
features reflect the judgments of that moment, while each fit uses the judgments of
its own moment as labels.

Human judgments always override: :func:`job_probabilities` gives 1 to a document judged
relevant and 0 to one judged non-relevant, unless asked for the model's own p.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from django.db import transaction
from django.utils import timezone

from matcher import normalize
from nuggets_app.inference.services import job_judges, job_semantic
from nuggets_app.inference.services.corpus_stats import (
    document_terms,
    job_options,
    job_stats_ensure,
    stats_cache_clear,
)
from nuggets_app.inference.services.job_semantic import topic_statement
from nuggets_app.judging.selectors import human_grades
from nuggets_app.learning import family_choice, relevance_features, relevance_model
from nuggets_app.learning.ablation import judge_family, judge_of_family
from nuggets_app.learning.relevance_features import RelevanceModelError
from nuggets_app.learning.reliability import reliability_bins, reliability_cv
from nuggets_app.learning.semantic_features import SEMANTIC_FEATURE_NAMES
from nuggets_app.models import (
    Document,
    JobInference,
    JobTopicProbabilities,
    MatchChunk,
    MatchJob,
    Sample,
    SampleDocument,
    Topic,
)

_HEADER = np.dtype("<i8")


# --- packing ---------------------------------------------------------------------------
def features_pack(doc_ids: Sequence[int] | np.ndarray, matrix: np.ndarray) -> bytes:
    """Document ids and their features (documents x features, float64) as one blob."""
    matrix = np.asarray(matrix, dtype="<f8").reshape(len(doc_ids), -1)
    header = np.array([len(doc_ids), matrix.shape[1]], dtype=_HEADER)
    ids = np.asarray(doc_ids, dtype="<i8")
    return header.tobytes() + ids.tobytes() + matrix.tobytes()


def features_unpack(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(document ids, feature matrix) of :func:`features_pack`."""
    n, width = (int(v) for v in np.frombuffer(blob, dtype=_HEADER, count=2))
    offset = 2 * _HEADER.itemsize
    ids = np.frombuffer(blob, dtype="<i8", count=n, offset=offset)
    matrix = np.frombuffer(blob, dtype="<f8", count=n * width, offset=offset + 8 * n)
    return ids, matrix.reshape(n, width)


# --- features inside chunks -------------------------------------------------------------
_EVIDENCE: dict[tuple[int, int], relevance_features.TopicEvidence] = {}


def features_cache_clear() -> None:
    """Forget the per-process statistics and topic evidence."""
    stats_cache_clear()
    _EVIDENCE.clear()


def topic_evidence_load(
    *, job: MatchJob, topic_id: int
) -> relevance_features.TopicEvidence:
    """The topic's evidence (statement, nuggets, judged documents, terms of the judged
    relevant ones), built once per worker process and job."""
    from nuggets_app.inference.selectors import job_nuggets

    key = (job.pk, topic_id)
    if key in _EVIDENCE:
        return _EVIDENCE[key]
    stats = job_stats_ensure(job=job)
    options = job_options(job)
    topic = Topic.objects.get(pk=topic_id)
    # A nugget imported without a source document (a TREC QA, RAG or TS bank) has
    # no docno: no document leaves it out (leave-one-out), every one counts it.
    nuggets = [
        relevance_features.NuggetText(normalize(text, options), docno, str(pk))
        for pk, text, docno in job_nuggets(job, topic_id).values_list(
            "pk", "text", "document__docno"
        )
    ]
    level = job.relevance_level
    grades = human_grades([topic_id])
    docs = dict(
        Document.objects.filter(pk__in=[d for _, d in grades]).values_list(
            "pk", "docno"
        )
    )
    judged = {docs[d]: grade >= level for (_, d), grade in grades.items()}
    terms = {
        docno: document_terms(title, text, options)
        for docno, title, text in Document.objects.filter(
            pk__in=list(docs)
        ).values_list("docno", "title", "text")
    }
    evidence = relevance_features.topic_evidence(
        topic_terms=normalize(topic_statement(topic), options),
        nuggets=nuggets,
        judged=judged,
        relevant_terms={d: t for d, t in terms.items() if judged[d]},
        nonrelevant_terms={d: t for d, t in terms.items() if not judged[d]},
        stats=stats,
    )
    if len(_EVIDENCE) > 64:
        _EVIDENCE.clear()
    _EVIDENCE[key] = evidence
    return evidence


def chunk_features_pack(
    *,
    job: MatchJob,
    topic_id: int,
    documents: Sequence[tuple[int, str, Sequence[str], dict[str, float]]],
) -> bytes:
    """Packed raw features of ``(document id, docno, terms, {nugget id: min-span
    score})`` rows of one topic."""
    stats = job_stats_ensure(job=job)
    evidence = topic_evidence_load(job=job, topic_id=topic_id)
    width = len(relevance_features.FEATURE_NAMES)
    matrix = np.zeros((len(documents), width), dtype=np.float64)
    for i, (_, docno, terms, minspan) in enumerate(documents):
        matrix[i] = relevance_features.document_features(
            evidence, stats, docno, terms, minspan=minspan
        )
    return features_pack([d for d, _, _, _ in documents], matrix)


# --- fitting ----------------------------------------------------------------------------
@dataclass
class FitSummary:
    """What a fit did."""

    documents: int
    judged: int
    relevant: int
    seconds: float
    topics: int
    model_seconds: float = 0.0  # in the model's own fit and predict


def job_features(job: MatchJob) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{topic id: (document ids, feature matrix)} from the packed chunks."""
    blobs = list(
        MatchChunk.objects.filter(job=job)
        .order_by("topic_id", "index")
        .values_list("topic_id", "packed_features")
    )
    if not blobs:
        raise RelevanceModelError(f"job {job.pk} has no chunks")
    if any(blob is None for _, blob in blobs):
        raise RelevanceModelError(
            f"job {job.pk} has chunks without stored features (a job from before "
            "the relevance model, or not finished); re-run it"
        )
    parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for topic_id, blob in blobs:
        parts.setdefault(topic_id, []).append(features_unpack(bytes(cast(bytes, blob))))
    return {
        topic_id: (
            np.concatenate([ids for ids, _ in pieces]),
            np.concatenate([m for _, m in pieces]),
        )
        for topic_id, pieces in parts.items()
    }


def _labels(
    job: MatchJob, features: dict[int, tuple[np.ndarray, np.ndarray]]
) -> dict[int, np.ndarray]:
    """{topic id: 1 judged relevant, 0 judged non-relevant, -1 unjudged}, relevant at
    the job's level."""
    level = job.relevance_level
    by_topic: dict[int, dict[int, int]] = {}
    for (topic_id, doc_id), grade in human_grades(features).items():
        by_topic.setdefault(topic_id, {})[doc_id] = int(grade >= level)
    out = {}
    for topic_id, (ids, _) in features.items():
        labels = np.full(len(ids), -1, dtype=np.int64)
        judged = by_topic.get(topic_id)
        if judged:
            docs = np.fromiter(judged, dtype=np.int64, count=len(judged))
            values = np.fromiter(judged.values(), dtype=np.int64, count=len(judged))
            order = np.argsort(ids, kind="stable")
            at = np.searchsorted(ids, docs, sorter=order)
            at = np.minimum(at, len(ids) - 1)
            found = ids[order[at]] == docs
            labels[order[at[found]]] = values[found]
        out[topic_id] = labels
    return out


def fit_sample(job: MatchJob, sample: Sample | None = None) -> Sample | None:
    """The sample whose design the job's model uses: ``sample`` when given, else the
    job's own, else the newest sample of the job's pool (verification samples
    aside); None when the job's pool has none (equal weights)."""
    if sample is not None:
        return sample
    if job.sample_id is not None:
        return job.sample
    if job.pool_id is None:
        return None
    return (
        Sample.objects.filter(pool_id=job.pool_id)
        .exclude(method__in=Sample.NOT_STATAP)
        .order_by("-pk")
        .first()
    )


def _sample_weights(
    sample: Sample | None,
    features: dict[int, tuple[np.ndarray, np.ndarray]],
    qids: dict[int, str],
) -> dict[str, np.ndarray] | None:
    """Weight 1 / inclusion probability per drawn document of ``sample`` (1 for other
    judged documents), so the judged sample stands for the whole pool (None without a
    sample: equal weights)."""
    if sample is None:
        return None
    inclusion = {
        (t, d): p
        for t, d, p in SampleDocument.objects.filter(sample=sample).values_list(
            "topic_id", "document_id", "inclusion_prob"
        )
    }
    out = {}
    for topic_id, (ids, _) in features.items():
        out[qids[topic_id]] = np.array(
            [
                1.0 / p if (p := inclusion.get((topic_id, d))) and p > 0 else 1.0
                for d in ids.tolist()
            ]
        )
    return out


def sample_fully_judged(
    sample: Sample | None,
    features: dict[int, tuple[np.ndarray, np.ndarray]],
    labels: dict[int, np.ndarray],
) -> bool:
    """Whether every drawn document of ``sample`` (in the job's topics and documents)
    has a judgment: only then is the sample's Horvitz-Thompson estimate of the pool's
    relevant documents usable to anchor the model (a sample still being judged would
    count its unjudged draws as non-relevant)."""
    if sample is None:
        return False
    drawn: dict[int, set[int]] = {}
    rows = SampleDocument.objects.filter(
        sample=sample, topic_id__in=list(features)
    ).values_list("topic_id", "document_id")
    for topic_id, doc_id in rows:
        drawn.setdefault(topic_id, set()).add(doc_id)
    for topic_id, docs in drawn.items():
        ids, _ = features[topic_id]
        mask = np.isin(ids, np.fromiter(docs, dtype=np.int64, count=len(docs)))
        if int(mask.sum()) < len(docs) or np.any(labels[topic_id][mask] < 0):
            return False
    return bool(drawn)


@dataclass
class FitData:
    """What the job's model is fitted on: per judged topic, the raw features and the
    labels, the sample's weights and anchor, and the topics left out."""

    features: dict[int, tuple[np.ndarray, np.ndarray]]  # topic id -> (doc ids, X)
    labels: dict[int, np.ndarray]
    qids: dict[int, str]
    sample: Sample | None
    weights: dict[str, np.ndarray] | None
    pool_relevant: float | None
    # qids of the job's topics without any judged document: no p, no inferred line.
    unjudged: list[str]
    # The model's columns: the lexical features, then the semantic ones when used.
    feature_names: tuple[str, ...] = relevance_features.FEATURE_NAMES
    semantic: dict[str, Any] = field(default_factory=dict)  # on, reason
    # The automatic judges read: name, kind, model, labels, pairs (job_judges).
    judges: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rows(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{qid: (features, labels)} as the model's fit takes them."""
        return {
            self.qids[t]: (self.features[t][1], self.labels[t]) for t in self.features
        }


def fit_data(
    job: MatchJob,
    sample: Sample | None = None,
    *,
    semantic: bool | None = None,
    judges: Sequence[str] | None = None,
) -> FitData:
    """The job's features and labels of now, with the design of :func:`fit_sample`:
    weights 1/pi of its drawn documents, anchored to its Horvitz-Thompson estimate of
    the relevant pooled documents when every drawn document is judged. Topics
    without a judged document are left out: nothing was sampled there.

    ``semantic``: append the semantic features (:mod:`.job_semantic`); None: when
    the extra is installed and the job's embeddings are stored
    (:func:`~.job_semantic.semantic_readiness`); True raises when they cannot be.
    ``judges``: the automatic judges whose grades are appended (:mod:`.job_judges`);
    None: those the job's stored fit read."""
    features = job_features(job)
    labels = _labels(job, features)
    qids = dict(Topic.objects.filter(pk__in=list(features)).values_list("pk", "qid"))
    unjudged = sorted(qids[t] for t, y in labels.items() if not np.any(y >= 0))
    features = {t: f for t, f in features.items() if qids[t] not in unjudged}
    labels = {t: labels[t] for t in features}
    names = relevance_features.FEATURE_NAMES
    status: dict[str, Any] = {"on": False, "reason": "semantic features: not asked"}
    if semantic is not False:
        ready = job_semantic.semantic_readiness(
            job, (d for ids, _ in features.values() for d in ids.tolist())
        )
        if semantic and not ready.on:
            raise RelevanceModelError(f"job {job.pk}: {ready.reason}")
        status = ready.as_dict()
        if ready.on and features:
            features = job_semantic.with_semantic(job, features)
            names = names + SEMANTIC_FEATURE_NAMES
    if judges is None:
        judges = job_judges.stored_judges(job)
    features, judge_names, read = job_judges.with_judges(job, features, qids, judges)
    design = fit_sample(job, sample)
    weights = _sample_weights(design, features, qids)
    pool_relevant = (
        relevance_model.horvitz_thompson_relevant(
            {qids[t]: y for t, y in labels.items()}, weights
        )
        if weights is not None and sample_fully_judged(design, features, labels)
        else None
    )
    return FitData(
        features,
        labels,
        qids,
        design,
        weights,
        pool_relevant,
        unjudged,
        names + judge_names,
        status,
        read,
    )


def stored_semantic(model: dict[str, Any] | None) -> bool:
    """Whether a stored model (its JSON) was fitted with the semantic features, so
    that what reads it (the cross-fit, unpooled documents) builds the same columns."""
    names = (model or {}).get("feature_names", ())
    return any(name in SEMANTIC_FEATURE_NAMES for name in names)


def judgments_digest(data: FitData) -> list[list[int]]:
    """``[[topic id, document id, label], ...]`` of the judged documents the fit saw
    (so a page can say which judgments changed since)."""
    out: list[list[int]] = []
    for topic_id in sorted(data.labels):
        ids = data.features[topic_id][0]
        y = data.labels[topic_id]
        out.extend([topic_id, int(ids[i]), int(y[i])] for i in np.flatnonzero(y >= 0))
    return out


def _families_choose(
    data: dict[str, tuple[np.ndarray, np.ndarray]],
    judges: Sequence[str],
    nugget_choice: bool,
    common: dict[str, Any],
) -> family_choice.FamiliesChoice | None:
    """The families a fit keeps: the nuggets (with ``nugget_choice``), then each
    judge, each only where it pays (None: nothing to choose)."""
    families = (("nuggets",) if nugget_choice else ()) + tuple(
        judge_family(n) for n in judges
    )
    if not families:
        return None
    return family_choice.families_choice(data, families=families, **common)


def judge_choices(chosen: family_choice.FamiliesChoice | None) -> list[dict[str, Any]]:
    """What the fit records of each judge family (``fit_info["judge_choice"]``)."""
    return [
        {**c.as_dict(), "judge": judge_of_family(c.family)}
        for c in (chosen.choices if chosen is not None else ())
        if judge_of_family(c.family) is not None
    ]


def job_model_fit(
    *,
    job: MatchJob,
    sample: Sample | None = None,
    reliability: bool = True,
    ablate: Sequence[str] = (),
    nugget_choice: bool = True,
    semantic: bool | None = None,
) -> FitSummary:
    """Fit the model on the job's judged documents, with the design of ``sample``
    (:func:`fit_data`), and store it with a probability of relevance for every
    (topic, document) of the job's judged topics. ``reliability``: also estimate the
    reliability diagram by cross-validation on the judged documents. ``ablate``:
    feature families left out of the fit (:mod:`nuggets_app.learning.ablation`);
    without it and with ``nugget_choice`` the job keeps the nugget family only where
    its own held-out log-loss says it pays (:mod:`nuggets_app.learning.family_choice`),
    recorded in ``fit_info["nugget_choice"]``; every judge of the collection is a
    family too, kept the same way without ``ablate`` (``fit_info["judge_choice"]``).
    ``semantic``: as :func:`fit_data` (None: the semantic features whenever the
    job's embeddings are stored)."""
    if job.status != MatchJob.Status.DONE:
        raise RelevanceModelError(f"job {job.pk} is {job.status}; fit a finished job")
    started = time.perf_counter()
    judges = job_judges.collection_judge_names(job)
    fit = fit_data(job, sample, semantic=semantic, judges=judges)
    if not fit.features:
        message = "no judged document in any topic of the job"
        _inference_update(job, error=message)
        raise RelevanceModelError(f"job {job.pk}: {message}")
    data, qids, features = fit.rows, fit.qids, fit.features
    common: dict[str, Any] = {
        "weights": fit.weights,
        "pool_relevant": fit.pool_relevant,
        "feature_names": fit.feature_names,
    }
    try:
        fit_started = time.perf_counter()
        chosen = None
        if not ablate:
            chosen = _families_choose(data, judges, nugget_choice, common)
            ablate = chosen.ablate if chosen is not None else ()
        choice = chosen.of("nuggets") if chosen is not None else None
        model = relevance_model.model_fit(data, ablate=ablate, **common)
        predicted = relevance_model.model_predict(model, data)
        model_seconds = time.perf_counter() - fit_started
    except RelevanceModelError as exc:
        _inference_update(job, error=str(exc))
        raise RelevanceModelError(f"job {job.pk}: {exc}") from exc
    order = sorted(features, key=lambda t: qids[t])
    documents = sum(len(features[t][0]) for t in order)
    all_labels = np.concatenate([fit.labels[t] for t in order])
    info: dict[str, Any] = {
        "documents": documents,
        "judged": int((all_labels >= 0).sum()),
        "relevant": int((all_labels == 1).sum()),
        "relevance_level": job.relevance_level,
        "sum_p": {qids[t]: float(np.sum(predicted[qids[t]])) for t in order},
        # The sample's Horvitz-Thompson estimate the model was anchored to (None:
        # not anchored, without a sample or with one not fully judged).
        "pool_relevant": fit.pool_relevant,
        "sample": fit.sample.name if fit.sample is not None else None,
        "unjudged_topics": fit.unjudged,
        "judgments": judgments_digest(fit),
        "semantic": fit.semantic,
        "nugget_choice": choice.as_dict() if choice is not None else None,
        "judges": fit.judges,
        "judge_choice": judge_choices(chosen),
    }
    if reliability:
        info["reliability"] = (
            reliability_bins(chosen.held)
            if chosen is not None
            else reliability_cv(data, ablate=ablate, **common)
        )
    job_judges.judges_mark_read(job=job, names=judges)
    with transaction.atomic():
        _probabilities_store(
            job, {t: (features[t][0], predicted[qids[t]]) for t in order}
        )
        seconds = time.perf_counter() - started
        _inference_update(
            job,
            model=json.loads(model.to_json()),
            fit_info=info,
            fit_sample=fit.sample,
            fitted_at=timezone.now(),
            fit_seconds=seconds,
            error="",
        )
    return FitSummary(
        documents=documents,
        judged=info["judged"],
        relevant=info["relevant"],
        seconds=seconds,
        topics=len(order),
        model_seconds=model_seconds,
    )


def _probabilities_store(
    job: MatchJob, columns: dict[int, tuple[np.ndarray, Any]]
) -> None:
    """Replace the job's probabilities by ``{topic id: (document ids, p)}``, a row
    per topic, written a few at a time (a topic of a million documents is 16 MB).
    Two fits of one job at once (the fit the last chunk enqueues, a user's refit)
    take turns on the job's model row: the later one replaces the earlier's rows."""
    JobInference.objects.get_or_create(job=job)
    list(
        JobInference.objects.select_for_update()
        .filter(job=job)
        .values_list("pk", flat=True)
    )
    JobTopicProbabilities.objects.filter(job=job).delete()
    rows = (
        JobTopicProbabilities(
            job=job,
            topic_id=topic_id,
            probabilities=features_pack(docs, np.asarray(p, dtype=float)),
        )
        for topic_id, (docs, p) in columns.items()
    )
    while batch := list(itertools.islice(rows, 8)):
        JobTopicProbabilities.objects.bulk_create(batch)


def _inference_update(job: MatchJob, **fields: Any) -> None:
    """Write only these fields of the job's model row (never reading back, nor
    rewriting, its corpus statistics), creating the row if a job predates it."""
    if not JobInference.objects.filter(job=job).update(**fields):
        JobInference.objects.create(job=job, **fields)


# --- reading ----------------------------------------------------------------------------
def job_inference(job: MatchJob) -> JobInference | None:
    """The job's model row, if any."""
    return JobInference.objects.filter(job=job).first()


def job_probabilities(
    *, job: MatchJob, override: bool = True, topics: Iterable[int] | None = None
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{topic id: (document ids, p)} of the job's fitted model ({} without one).

    ``override``: a judged document's p is 1 when judged relevant, 0 when not."""
    stored = JobTopicProbabilities.objects.filter(job=job)
    if topics is not None:
        stored = stored.filter(topic_id__in=sorted(set(topics)))
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    # Only the topics asked for are read: a topic's row, not the whole job's p.
    for topic_id, blob in stored.order_by("topic_id").values_list(
        "topic_id", "probabilities"
    ):
        docs, matrix = features_unpack(bytes(blob))
        out[int(topic_id)] = (docs, matrix[:, 0].copy())
    if override and out:
        level = job.relevance_level
        judged: dict[int, dict[int, float]] = {}
        for (topic_id, doc_id), grade in human_grades(out).items():
            judged.setdefault(topic_id, {})[doc_id] = float(grade >= level)
        # Only the judged documents change: find them among the topic's documents
        # without visiting every one in Python.
        for topic_id, (docs, p) in out.items():
            labels = judged.get(topic_id)
            if not labels:
                continue
            ids = np.fromiter(labels, dtype=docs.dtype, count=len(labels))
            where = np.flatnonzero(np.isin(docs, ids))
            p[where] = [labels[int(d)] for d in docs[where]]
    return out
