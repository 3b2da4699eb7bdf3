"""The relevance model run over a pool from the documents' text: features, fit and
probabilities in one call (the simulation's model; a matching job's own model, fitted
from the features its chunks packed, is :mod:`nuggets_app.inference.services.job_model`).

:func:`relevance_model_run` computes the features of
:mod:`nuggets_app.learning.relevance_features` for every (topic, pooled document) from
the documents' text, the topic statements, the job's nuggets and the min-span scores
stored with the job's chunks, fits the model on the judged documents (weighted by the
inverse inclusion probability of the sample when one is given, so they stand for the
whole pool) and predicts a probability of relevance for every pooled document. Topics
without nuggets (or without a judged relevant document) are described by the features
that exist for them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.db.models import Q

from matcher import MatchOptions, normalize
from nuggets_app.collection.services.suite_runs import document_texts
from nuggets_app.inference.services import embeddings as stored
from nuggets_app.inference.services.evidence import evidence_nugget_scores
from nuggets_app.learning.crossfit import crossfit_by_docno, crossfit_predict
from nuggets_app.learning.embeddings import DIMENSION
from nuggets_app.learning.relevance_features import (
    FEATURE_NAMES,
    CorpusStats,
    FloatArray,
    NuggetText,
    PreparedDocument,
    document_features,
    document_prepare,
    topic_evidence,
)
from nuggets_app.learning.relevance_model import (
    RelevanceModel,
    horvitz_thompson_relevant,
    model_fit,
    model_predict,
)
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS
from nuggets_app.learning.semantic_features import (
    SEMANTIC_FEATURE_NAMES,
    semantic_evidence,
    semantic_features,
)
from nuggets_app.learning.unpooled import crossfit_beside_pool, predict_beside_pool
from nuggets_app.models import (
    Collection,
    Document,
    MatchChunk,
    MatchJob,
    Nugget,
    Topic,
)

Labels = Mapping[str, Mapping[str, int]]


@dataclass
class RelevancePrediction:
    """The fitted model, the raw features (rows in ``docnos`` order) and the
    probabilities of every pooled document, keyed by qid and docno."""

    model: RelevanceModel
    docnos: dict[str, list[str]]
    features: dict[str, FloatArray]
    probabilities: dict[str, dict[str, float]]
    # p of every pooled document from the model fitted on the other topic folds
    # (nuggets_app.learning.crossfit): what the model-assisted estimator needs.
    crossfit: dict[str, dict[str, float]] | None = None
    # Documents outside the pool (``extra`` of relevance_model_run), z-scored beside
    # it (nuggets_app.learning.unpooled): the full fit's p and the cross-fitted p.
    extra_probabilities: dict[str, dict[str, float]] | None = None
    extra_crossfit: dict[str, dict[str, float]] | None = None


def collection_terms(
    collection: Collection, options: MatchOptions
) -> dict[str, list[str]]:
    """{docno: matcher terms} of every document of a collection, title included (the
    text the retrieval models index)."""
    return {
        docno: normalize(text, options) for docno, text in document_texts(collection)
    }


def topic_statement(topic: Topic) -> str:
    """The title, and the description when it says something else."""
    title, description = topic.title.strip(), topic.description.strip()
    if not title or description.startswith(title):
        return description or title
    return f"{title}\n{description}" if description else title


def _minspan_scores(job: MatchJob) -> dict[int, dict[int, dict[str, float]]]:
    """{topic id: {document id: {nugget id: min-span score}}} from the packed evidence."""
    out: dict[int, dict[int, dict[str, float]]] = {}
    chunks = MatchChunk.objects.filter(job=job).values_list(
        "topic_id", "packed_evidence"
    )
    for topic_id, blob in chunks.iterator(chunk_size=50):
        if blob is None:
            continue
        per_doc = out.setdefault(topic_id, {})
        for doc_id, scores in evidence_nugget_scores(bytes(blob), job.lam).items():
            per_doc[doc_id] = {str(n): s for n, s in scores.items()}
    return out


def _nuggets(job: MatchJob | None, topic_ids: Sequence[int], options: MatchOptions):
    """{topic id: [NuggetText]} of the job's nuggets (none without a job)."""
    found: dict[int, list[NuggetText]] = {}
    if job is None:
        return found
    rows = Nugget.objects.filter(topic_id__in=list(topic_ids))
    f = job.nugget_filter or {}
    if f.get("assessors") or f.get("banks"):
        rows = rows.filter(
            Q(assessor_id__in=f.get("assessors") or [])
            | Q(bank_id__in=f.get("banks") or [])
        )
    if f.get("grades"):
        rows = rows.filter(grade__in=f["grades"])
    if f.get("aspects"):
        rows = rows.filter(aspect__in=f["aspects"])
    values = rows.order_by("pk").values_list(
        "pk", "topic_id", "text", "document__docno"
    )
    for pk, topic_id, text, docno in values:
        found.setdefault(topic_id, []).append(
            NuggetText(tuple(normalize(text, options)), docno, str(pk))
        )
    return found


def relevance_model_run(
    *,
    collection_id: int,
    job: MatchJob | None,
    pool: Mapping[str, Sequence[str]],
    labels: Labels,
    inclusion: Mapping[str, Mapping[str, float]] | None = None,
    relevance_level: int = 1,
    c: float | None = None,
    extra: Mapping[str, Sequence[str]] | None = None,
    extra_minspan: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    semantic: bool = False,
    ablate: Sequence[str] = (),
) -> RelevancePrediction:
    """Features, fit and probabilities for the pooled documents (``{qid: docnos}``).

    ``labels`` are the human grades of the judged documents (``{qid: {docno: grade}}``;
    relevant when ``>= relevance_level``); ``inclusion`` their inclusion probabilities
    in the sample (weights ``1/p``; equal weights when absent; given, the model is
    anchored to the sample's Horvitz-Thompson estimate of the number of relevant
    pooled documents, see :func:`nuggets_app.learning.relevance_model.anchor_shift`). ``job`` supplies the
    nuggets (its nugget filter), the text pipeline and the min-span scores; without a
    job the model uses the topic statements and the judged documents only. ``c`` is
    the inverse L2 strength of the fit (None: chosen by cross-validation over topics).
    ``extra``: documents outside the pool (``{qid: docnos}``, e.g. a held-out run's),
    described with the same statistics and topic evidence (their min-span scores from
    ``extra_minspan``, ``{qid: {docno: {nugget id: score}}}``) and scored beside the
    pool without entering the fit.
    ``semantic`` adds the features of
    :mod:`nuggets_app.learning.semantic_features` (requirements-semantic.txt must be
    installed): the pooled (and ``extra``) documents and the nuggets without stored
    embeddings are embedded first, in this process, and kept for the next run.
    ``ablate``: feature families left out of the fit and the cross-fit
    (:mod:`nuggets_app.learning.ablation`).
    """
    options = (
        MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)
        if job is not None
        else MatchOptions()
    )
    collection = Collection.objects.get(pk=collection_id)
    terms = collection_terms(collection, options)
    stats = CorpusStats.from_tokens(terms.values())
    topics = {
        t.qid: t
        for t in Topic.objects.filter(collection_id=collection_id, qid__in=list(pool))
    }
    nuggets = _nuggets(job, [t.pk for t in topics.values()], options)
    minspan = _minspan_scores(job) if job is not None else {}
    doc_ids = dict(
        Document.objects.filter(collection_id=collection_id).values_list("docno", "pk")
    )
    windows = (
        _pool_windows(collection_id, {**(extra or {}), **pool}, labels, doc_ids)
        if semantic
        else {}
    )
    vectors = _nugget_vectors(nuggets) if semantic else {}
    names = FEATURE_NAMES + (SEMANTIC_FEATURE_NAMES if semantic else ())
    rows: dict[str, tuple[FloatArray, np.ndarray]] = {}
    weights: dict[str, FloatArray] = {}
    docnos: dict[str, list[str]] = {}
    prepared: dict[str, PreparedDocument] = {}
    extra_x: dict[str, FloatArray] = {}
    extra_docnos: dict[str, list[str]] = {}
    for qid in sorted(pool):
        topic = topics.get(qid)
        statement = topic_statement(topic) if topic else ""
        judged_grades = labels.get(qid, {})
        judged = {d: g >= relevance_level for d, g in judged_grades.items()}
        evidence = topic_evidence(
            topic_terms=normalize(statement, options),
            nuggets=nuggets.get(topic.pk, []) if topic else [],
            judged=judged,
            relevant_terms={d: terms.get(d, []) for d, rel in judged.items() if rel},
            nonrelevant_terms={
                d: terms.get(d, []) for d, rel in judged.items() if not rel
            },
            stats=stats,
        )
        per_doc = minspan.get(topic.pk, {}) if topic else {}
        ordered = list(pool[qid])
        for d in ordered:
            if d not in prepared:
                prepared[d] = document_prepare(stats, terms.get(d, []))
        x = np.array(
            [
                document_features(
                    evidence, stats, d, prepared[d], per_doc.get(doc_ids.get(d, -1))
                )
                for d in ordered
            ],
            dtype=np.float64,
        ).reshape(len(ordered), len(FEATURE_NAMES))
        if semantic:
            x = np.hstack(
                [x, _semantic_rows(topic, nuggets, vectors, windows, judged, ordered)]
            )
        y = np.array([int(judged[d]) if d in judged else -1 for d in ordered])
        probs = (inclusion or {}).get(qid, {})
        weights[qid] = np.array(
            [1.0 / probs[d] if probs.get(d, 0) > 0 else 1.0 for d in ordered]
        )
        rows[qid] = (x, y)
        docnos[qid] = ordered
        known = set(ordered)
        more = [d for d in dict.fromkeys((extra or {}).get(qid, ())) if d not in known]
        if more:
            spans = (extra_minspan or {}).get(qid, {})
            extra_x[qid] = np.array(
                [
                    document_features(
                        evidence,
                        stats,
                        d,
                        document_prepare(stats, terms.get(d, [])),
                        spans.get(d),
                    )
                    for d in more
                ],
                dtype=np.float64,
            ).reshape(len(more), len(FEATURE_NAMES))
            if semantic:
                extra_x[qid] = np.hstack(
                    [
                        extra_x[qid],
                        _semantic_rows(topic, nuggets, vectors, windows, judged, more),
                    ]
                )
            extra_docnos[qid] = more
    # With a sample, anchor the model's expected count of relevant pooled documents to
    # the sample's Horvitz-Thompson estimate (statAP's R-hat summed over topics).
    pool_relevant = (
        horvitz_thompson_relevant({q: y for q, (_, y) in rows.items()}, weights)
        if inclusion is not None
        else None
    )
    model = model_fit(
        rows,
        weights=weights,
        c=c,
        pool_relevant=pool_relevant,
        feature_names=names,
        ablate=ablate,
    )
    predicted = model_predict(model, {q: x for q, (x, _) in rows.items()})
    crossfit = crossfit_predict(
        rows,
        weights=weights,
        c=model.c,
        anchored=pool_relevant is not None,
        feature_names=names,
        ablate=ablate,
    )
    return RelevancePrediction(
        model=model,
        docnos=docnos,
        features={q: x for q, (x, _) in rows.items()},
        probabilities={
            q: dict(zip(docnos[q], predicted[q].tolist(), strict=True)) for q in docnos
        },
        crossfit=crossfit_by_docno(crossfit, docnos),
        extra_probabilities={
            q: dict(
                zip(
                    extra_docnos[q],
                    predict_beside_pool(model, rows[q][0], x).tolist(),
                    strict=True,
                )
            )
            for q, x in extra_x.items()
        },
        extra_crossfit={
            q: dict(zip(extra_docnos[q], p.tolist(), strict=True))
            for q, p in crossfit_beside_pool(
                crossfit, {q: x for q, (x, _) in rows.items()}, extra_x
            ).items()
        },
    )


def _pool_windows(
    collection_id: int,
    pool: Mapping[str, Sequence[str]],
    labels: Labels,
    doc_ids: Mapping[str, int],
) -> dict[str, np.ndarray]:
    """{docno: window embeddings} of the pooled and judged documents, embedding (and
    storing) those that have none yet."""
    docnos = {d for docs in pool.values() for d in docs}
    docnos |= {d for docs in labels.values() for d in docs}
    ids = {doc_ids[d]: d for d in docnos if d in doc_ids}
    missing = (
        Document.objects.filter(pk__in=list(ids))
        .exclude(embeddings__model=stored.MODEL)
        .only("pk", "text")
        .order_by("pk")
    )
    batch: list[Document] = []
    for doc in missing.iterator(chunk_size=500):
        batch.append(doc)
        if len(batch) == 500:
            stored.documents_embed(batch, max_words=DEFAULT_MAX_WORDS)
            batch = []
    if batch:
        stored.documents_embed(batch, max_words=DEFAULT_MAX_WORDS)
    found = stored.document_windows(list(ids))
    empty = np.zeros((0, DIMENSION), np.float32)
    return {ids[pk]: found.get(pk, ([], empty))[1] for pk in ids}


def _nugget_vectors(
    nuggets: Mapping[int, Sequence[NuggetText]],
) -> dict[str, np.ndarray]:
    """{nugget id: embedding} of every nugget, embedding those without one."""
    ids = [int(n.id) for texts in nuggets.values() for n in texts]
    stored.nuggets_embed(nugget_ids=ids)
    return {str(pk): v for pk, v in stored.nugget_vectors(ids).items()}


def _semantic_rows(
    topic: Topic | None,
    nuggets: Mapping[int, Sequence[NuggetText]],
    vectors: Mapping[str, np.ndarray],
    windows: Mapping[str, np.ndarray],
    judged: Mapping[str, bool],
    ordered: Sequence[str],
) -> FloatArray:
    empty = np.zeros((0, DIMENSION), np.float32)
    texts = nuggets.get(topic.pk, []) if topic else []
    statement = topic_statement(topic) if topic else ""
    evidence = semantic_evidence(
        nuggets=[(vectors[n.id], n.source) for n in texts if n.id in vectors],
        relevant_windows={d: windows.get(d, empty) for d, rel in judged.items() if rel},
        dimension=DIMENSION,
        topic=_statement_vector(statement) if statement else None,
    )
    return np.array(
        [semantic_features(evidence, d, windows.get(d, empty)) for d in ordered],
        dtype=np.float64,
    ).reshape(len(ordered), len(SEMANTIC_FEATURE_NAMES))


@functools.lru_cache(maxsize=4096)
def _statement_vector(statement: str) -> np.ndarray:
    """The embedding of a topic statement (computed once per process)."""
    return stored.text_vectors([statement])[0]
