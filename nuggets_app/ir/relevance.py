"""The inference model: the probability that a pooled document is relevant.

Pure and Django-free. A topic's pooled documents are described by a few features
computed from what the assessor gave (the topic statement, the nuggets, the judged
sample); an L2-regularised logistic regression over those features, fitted on the judged
documents of every topic, turns them into probabilities, calibrated by cross-validation
over topics.

Features (:data:`FEATURE_NAMES`, raw values in this column order; ``d`` is the document
being described):

``nugget_bm25``
    The mean over the topic's nuggets, except those extracted from ``d`` itself, of
    the BM25 of ``d`` for the nugget's text (0 without such a nugget). BM25 is linear in
    the query term counts, so this is the BM25 of one query made of every nugget,
    divided by the number of nuggets: with ``topic_bm25`` it gives the "topic statement
    plus every nugget as one query" score. A mean, not a sum, so that leaving out
    ``d``'s own nuggets does not lower a judged relevant document's value: with a sum,
    judged relevant documents would be scored with a shorter query than all the others
    and look less relevant than unjudged relevant ones.
``topic_bm25``
    BM25 of ``d`` for the topic statement alone.
``feedback_bm25``
    BM25 with true relevance feedback from the judged relevant documents other than
    ``d``: Robertson/Spärck Jones term weights, the topic terms plus the
    ``expansion_terms`` terms with the best offer weight ``r·w`` (as the baseline of
    :func:`nuggets_app.ir.retrieval.relevance_feedback_bm25`). Plain BM25 of the
    topic statement when no other judged document is relevant.
``relevant_similarity`` / ``nonrelevant_similarity``
    The mean cosine similarity of ``d`` to the judged relevant (non-relevant)
    documents other than ``d``, documents as L2-normalised ``(1 + ln tf) · idf``
    vectors (Rocchio's centroids; 0 without such a document). A mean over the other
    documents has the same expectation whether or not ``d`` was judged, which BM25
    with feedback from one document fewer has not.
``minspan_mean`` / ``minspan_matched``
    The min-span matcher's nugget scores of ``d`` (algorithms.md section 4) over the
    nuggets not extracted from ``d``: their mean, and the share of them with a
    positive score (0 without matcher scores). Means and shares for the same reason
    as above (a maximum over fewer nuggets is lower).
``log_prevalence``
    ``ln((r + 0.5) / (n + 1))`` with ``n`` judged documents of the topic other than
    ``d`` and ``r`` of them relevant: how rich in relevant documents the topic is.

Leave-one-out is built into :func:`document_features`: nothing in the features of ``d``
depends on ``d``'s own label or on the nuggets extracted from ``d``, so a judged
document is described exactly as an unjudged one would be, and the model fitted on
judged documents applies to unjudged ones.

BM25 (``k1 = 1.2``, ``b = 0.75``) uses :class:`CorpusStats` (documents, mean length,
document frequencies): ``Σ qtf · w · tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``
with ``w = ln(1 + (N - df + 0.5) / (df + 0.5))``, or the RSJ weight (floored at 0)
for the feedback feature. Terms are the matcher's (:func:`matcher.normalize`:
casefold, stopwords out, Porter stems), so the features agree with the matcher.

Model (:class:`RelevanceModel`): the document-level features are z-scored within each
topic's pool (mean 0, sd 1 over the topic's pooled documents, judged or not; a constant
feature becomes 0), so a score means "how far above this topic's typical pooled
document"; topic-level features (``log_prevalence``) are centred and scaled over all
rows at fit time. The L2 strength is chosen by cross-validation over the same topic
folds (:func:`select_c`): with one or two judged relevant documents per topic, which
leave-one-out strips of their own nugget, feedback and similarity evidence, a light
penalty fits noise and a stronger one wins on held-out topics. Weights (e.g. inverse inclusion probabilities of a statAP sample) make
the judged documents stand for the whole pool. The fitted logits are calibrated by
Platt scaling fitted on out-of-fold logits (folds are groups of topics), so
probabilities are honest on topics the model did not see.

Anchoring (``pool_relevant`` of :func:`model_fit`): when the judged documents are a
probability sample of the pools, the calibrated model is anchored to the sample's
Horvitz-Thompson estimate of the number of relevant pooled documents
(:func:`horvitz_thompson_relevant`, ``Σ y / π`` over the judged documents: statAP's
estimated R summed over topics). One logit shift, common to every topic, is added to
the calibrated logits (:func:`anchor_shift`) so that the model's expected count over the
pools, the human labels of the judged documents plus p of the unjudged ones, equals
that estimate. Platt scaling learns the calibration on judged documents, described with
leave-one-out features; with one or two judged relevant documents per topic (a small
collection, a small sample) those look weaker than unjudged relevant documents with
the same evidence, and the probabilities of the unjudged documents came out too low in
total (ADI at 10%: 0.83 of the true count). The Horvitz-Thompson estimate is unbiased
whatever the features do; summed over all topics it is stable enough to fix one
number (per topic it would be too noisy). A shift adds the same amount to every logit:
rankings within and across topics, hence MAP over the unjudged documents, do not
change, only the totals.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

FEATURE_NAMES: tuple[str, ...] = (
    "nugget_bm25",
    "topic_bm25",
    "feedback_bm25",
    "relevant_similarity",
    "nonrelevant_similarity",
    "minspan_mean",
    "minspan_matched",
    "log_prevalence",
)
# Features that are one value per topic (up to leave-one-out): not z-scored per topic.
TOPIC_FEATURES: frozenset[str] = frozenset({"log_prevalence"})

K1 = 1.2
B = 0.75
EXPANSION_TERMS = 20

FloatArray = npt.NDArray[np.float64]
Terms = Sequence[str]


class RelevanceModelError(ValueError):
    """The model cannot be fitted or read as asked; the message says why."""


# --- BM25 -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusStats:
    """BM25 statistics of the documents features are computed over."""

    n_docs: int
    avg_len: float
    df: Mapping[str, int]

    @classmethod
    def from_tokens(cls, documents: Iterable[Terms]) -> CorpusStats:
        """Statistics of documents given as term lists."""
        df: Counter[str] = Counter()
        n_docs = 0
        total = 0
        for terms in documents:
            n_docs += 1
            total += len(terms)
            df.update(set(terms))
        return cls(n_docs, total / n_docs if n_docs else 0.0, dict(df))

    def idf(self, term: str) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))`` (always positive)."""
        df = min(self.df.get(term, 0), self.n_docs)
        return math.log1p((self.n_docs - df + 0.5) / (df + 0.5))


def bm25_score(
    stats: CorpusStats,
    query: Mapping[str, float],
    counts: Mapping[str, int],
    length: int,
    weights: Mapping[str, float] | None = None,
) -> float:
    """BM25 of one document (term ``counts``, ``length`` terms) for ``query``
    (``{term: qtf}``); ``weights`` replaces idf per term. Terms are added in sorted
    order, so the sum does not depend on dict order."""
    norm = K1 * (1.0 - B + B * length / stats.avg_len) if stats.avg_len > 0 else K1
    total = 0.0
    shared = query.keys() & counts.keys() if len(query) > len(counts) else None
    for term in sorted(shared if shared is not None else query):
        tf = counts.get(term, 0)
        if tf:
            weight = weights[term] if weights else stats.idf(term)
            total += query[term] * weight * tf * (K1 + 1.0) / (tf + norm)
    return total


def _rsj_query(
    stats: CorpusStats,
    topic: Mapping[str, float],
    present: Counter[str],
    relevant: int,
    expansion_terms: int,
) -> tuple[dict[str, float], dict[str, float]]:
    """(query, term weights) of BM25 with relevance feedback from ``relevant``
    documents, ``present[t]`` of which contain term ``t``."""
    n_docs = float(max(stats.n_docs, relevant))

    def rsj(term: str) -> float:
        r = float(present.get(term, 0))
        n = float(max(stats.df.get(term, 0), r))
        big_r = float(relevant)
        return math.log(
            ((r + 0.5) * (n_docs - n - big_r + r + 0.5))
            / ((n - r + 0.5) * (big_r - r + 0.5))
        )

    offers = sorted(
        ((-r * rsj(t), t) for t, r in present.items() if r > 0),
    )
    query = dict(topic)
    for _, term in offers[:expansion_terms]:
        query.setdefault(term, 1.0)
    return query, {t: max(rsj(t), 0.0) for t in query}


# --- Topic evidence and features --------------------------------------------------------


class NuggetText(NamedTuple):
    """A nugget as features see it: its terms, the docno it was extracted from (None for
    a nugget written without a source document) and its id (keys of min-span scores)."""

    terms: Terms
    source: str | None = None
    id: str = ""


@dataclass(frozen=True)
class TopicEvidence:
    """What one topic's features are computed from (see :func:`topic_evidence`)."""

    topic_query: Mapping[str, float]
    nugget_query: Mapping[str, float]
    nugget_count: int
    own_nugget_count: Mapping[str, int]
    own_nugget_terms: Mapping[str, Counter[str]]
    nugget_sources: Mapping[str, str | None]
    judged: Mapping[str, bool]
    relevant_terms: Mapping[str, frozenset[str]]
    feedback: tuple[Mapping[str, float], Mapping[str, float] | None]
    feedback_without: Mapping[
        str, tuple[Mapping[str, float], Mapping[str, float] | None]
    ]
    relevant_centroid: Mapping[str, float] | None = None
    nonrelevant_centroid: Mapping[str, float] | None = None
    relevant_vectors: Mapping[str, Mapping[str, float]] | None = None
    nonrelevant_vectors: Mapping[str, Mapping[str, float]] | None = None
    expansion_terms: int = EXPANSION_TERMS


def tfidf_vector(stats: CorpusStats, terms: Terms) -> dict[str, float]:
    """L2-normalised ``(1 + ln tf) · idf`` weights of a document's terms."""
    weights = {
        t: (1.0 + math.log(c)) * stats.idf(t) for t, c in sorted(Counter(terms).items())
    }
    norm = math.sqrt(math.fsum(w * w for w in weights.values()))
    return {t: w / norm for t, w in weights.items()} if norm > 0 else {}


def _vector_sum(vectors: Iterable[Mapping[str, float]]) -> dict[str, float]:
    total: dict[str, float] = {}
    for vector in vectors:
        for term, weight in vector.items():
            total[term] = total.get(term, 0.0) + weight
    return total


def _mean_similarity(
    vector: Mapping[str, float],
    total: Mapping[str, float] | None,
    members: Mapping[str, Mapping[str, float]] | None,
    docno: str,
) -> float:
    """Mean dot product of ``vector`` with the member vectors other than ``docno``'s."""
    if not total or not members:
        return 0.0
    own = members.get(docno)
    count = len(members) - (own is not None)
    if count == 0:
        return 0.0
    shared = sorted(vector.keys() & total.keys())
    value = math.fsum(vector[t] * total[t] for t in shared)
    if own is not None:
        value -= math.fsum(vector[t] * own.get(t, 0.0) for t in sorted(vector))
    return value / count


def _feedback(
    stats: CorpusStats,
    topic: Mapping[str, float],
    present: Counter[str],
    relevant: int,
    expansion_terms: int,
) -> tuple[Mapping[str, float], Mapping[str, float] | None]:
    if relevant == 0:
        return dict(topic), None
    return _rsj_query(stats, topic, present, relevant, expansion_terms)


def topic_evidence(
    *,
    topic_terms: Terms,
    nuggets: Sequence[NuggetText],
    judged: Mapping[str, bool],
    relevant_terms: Mapping[str, Terms],
    stats: CorpusStats,
    nonrelevant_terms: Mapping[str, Terms] | None = None,
    expansion_terms: int = EXPANSION_TERMS,
) -> TopicEvidence:
    """Evidence of one topic: its statement's terms, its nuggets, its judged documents
    (docno -> relevant?) and the terms of the judged relevant ones (for feedback and
    the relevant centroid) and, optionally, of the judged non-relevant ones (for the
    non-relevant centroid; judged non-relevant documents without terms are left out).

    Raises :class:`RelevanceModelError` when a judged relevant document has no terms
    given.
    """
    missing = sorted(d for d, rel in judged.items() if rel and d not in relevant_terms)
    if missing:
        raise RelevanceModelError(
            f"judged relevant document {missing[0]} has no terms for feedback"
        )
    topic_query = {t: float(c) for t, c in Counter(topic_terms).items()}
    nugget_counts: Counter[str] = Counter()
    own: dict[str, Counter[str]] = {}
    own_count: Counter[str] = Counter()
    for nugget in nuggets:
        nugget_counts.update(nugget.terms)
        if nugget.source is not None:
            own.setdefault(nugget.source, Counter()).update(nugget.terms)
            own_count[nugget.source] += 1
    sets = {d: frozenset(relevant_terms[d]) for d in sorted(judged) if judged[d]}
    present: Counter[str] = Counter()
    for terms in sets.values():
        present.update(terms)
    feedback = _feedback(stats, topic_query, present, len(sets), expansion_terms)
    without = {}
    for docno, terms in sets.items():
        fewer = present.copy()
        fewer.subtract(terms)
        query, weights = _feedback(
            stats, topic_query, +fewer, len(sets) - 1, expansion_terms
        )
        without[docno] = (query, weights)
    rel_vectors = {d: tfidf_vector(stats, relevant_terms[d]) for d in sets}
    non_vectors = {
        d: tfidf_vector(stats, terms)
        for d, terms in sorted((nonrelevant_terms or {}).items())
        if d in judged and not judged[d]
    }
    return TopicEvidence(
        topic_query=topic_query,
        nugget_query={t: float(c) for t, c in nugget_counts.items()},
        nugget_count=len(nuggets),
        own_nugget_count=dict(own_count),
        own_nugget_terms=own,
        nugget_sources={n.id: n.source for n in nuggets if n.id},
        judged=dict(judged),
        relevant_terms=sets,
        feedback=feedback,
        feedback_without=without,
        relevant_centroid=_vector_sum(rel_vectors.values()),
        nonrelevant_centroid=_vector_sum(non_vectors.values()),
        relevant_vectors=rel_vectors,
        nonrelevant_vectors=non_vectors,
        expansion_terms=expansion_terms,
    )


def _minspan_features(
    evidence: TopicEvidence, docno: str, minspan: Mapping[str, float] | None
) -> tuple[float, float]:
    if not minspan:
        return 0.0, 0.0
    scores = [
        float(minspan.get(n, 0.0))
        for n, src in sorted(evidence.nugget_sources.items())
        if src != docno
    ]
    if not scores:
        return 0.0, 0.0
    return math.fsum(scores) / len(scores), sum(s > 0 for s in scores) / len(scores)


@dataclass(frozen=True)
class PreparedDocument:
    """A document's term counts, length and tf-idf vector, computed once for all the
    topics whose pool holds it (:func:`document_prepare`)."""

    counts: Mapping[str, int]
    length: int
    vector: Mapping[str, float]


def document_prepare(stats: CorpusStats, tokens: Terms) -> PreparedDocument:
    """What :func:`document_features` needs of a document's terms."""
    return PreparedDocument(Counter(tokens), len(tokens), tfidf_vector(stats, tokens))


def document_features(
    evidence: TopicEvidence,
    stats: CorpusStats,
    docno: str,
    tokens: Terms | PreparedDocument,
    minspan: Mapping[str, float] | None = None,
) -> tuple[float, ...]:
    """Raw features of one document (:data:`FEATURE_NAMES` order), leave-one-out.

    ``tokens`` are the document's terms (or :func:`document_prepare` of them, to
    reuse across topics); ``minspan`` maps nugget id to the matcher's
    score of this document for that nugget (absent ids score 0).
    """
    prepared = (
        tokens
        if isinstance(tokens, PreparedDocument)
        else document_prepare(stats, tokens)
    )
    counts, length, vector = prepared.counts, prepared.length, prepared.vector
    query = evidence.nugget_query
    own = evidence.own_nugget_terms.get(docno)
    if own:
        query = dict(query)
        for term, count in own.items():
            left = query.get(term, 0.0) - count
            if left > 0:
                query[term] = left
            else:
                query.pop(term, None)
    others = evidence.nugget_count - evidence.own_nugget_count.get(docno, 0)
    nugget = bm25_score(stats, query, counts, length) / others if others else 0.0
    topic = bm25_score(stats, evidence.topic_query, counts, length)
    fb_query, fb_weights = evidence.feedback_without.get(docno, evidence.feedback)
    feedback = bm25_score(stats, fb_query, counts, length, fb_weights)
    rel_sim = _mean_similarity(
        vector, evidence.relevant_centroid, evidence.relevant_vectors, docno
    )
    non_sim = _mean_similarity(
        vector, evidence.nonrelevant_centroid, evidence.nonrelevant_vectors, docno
    )
    mean_span, matched = _minspan_features(evidence, docno, minspan)
    judged, relevant = len(evidence.judged), len(evidence.relevant_terms)
    if docno in evidence.judged:
        judged -= 1
        relevant -= evidence.judged[docno]
    prevalence = math.log((relevant + 0.5) / (judged + 1.0))
    return (nugget, topic, feedback, rel_sim, non_sim, mean_span, matched, prevalence)


# --- The model --------------------------------------------------------------------------


TopicRows = tuple[FloatArray, npt.NDArray[Any]]


@dataclass(frozen=True)
class RelevanceModel:
    """A fitted model: features, which are z-scored per topic, the scaling of the others,
    coefficients over the standardised features, intercept, Platt calibration and the
    anchoring shift: ``p = sigmoid(slope · logit + offset + shift)``."""

    feature_names: tuple[str, ...]
    per_topic: tuple[bool, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    calibration: tuple[float, float] = (1.0, 0.0)
    c: float = 1.0
    fitted_rows: int = 0
    shift: float = 0.0

    def to_json(self) -> str:
        """The model as a JSON object (every field by name)."""
        return json.dumps(
            {
                "feature_names": list(self.feature_names),
                "per_topic": list(self.per_topic),
                "center": list(self.center),
                "scale": list(self.scale),
                "coef": list(self.coef),
                "intercept": self.intercept,
                "calibration": list(self.calibration),
                "c": self.c,
                "fitted_rows": self.fitted_rows,
                "shift": self.shift,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> RelevanceModel:
        """Read :meth:`to_json`; :class:`RelevanceModelError` names a bad field."""
        try:
            data = json.loads(text)
            names = tuple(str(n) for n in data["feature_names"])
            model = cls(
                feature_names=names,
                per_topic=tuple(bool(v) for v in data["per_topic"]),
                center=tuple(float(v) for v in data["center"]),
                scale=tuple(float(v) for v in data["scale"]),
                coef=tuple(float(v) for v in data["coef"]),
                intercept=float(data["intercept"]),
                calibration=(
                    float(data["calibration"][0]),
                    float(data["calibration"][1]),
                ),
                c=float(data.get("c", 1.0)),
                fitted_rows=int(data.get("fitted_rows", 0)),
                shift=float(data.get("shift", 0.0)),
            )
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise RelevanceModelError(f"relevance model JSON: {error}") from error
        sizes = {
            len(model.per_topic),
            len(model.center),
            len(model.scale),
            len(model.coef),
        }
        if sizes != {len(names)}:
            raise RelevanceModelError(
                "relevance model JSON: feature_names, per_topic, center, scale and "
                "coef must have the same length"
            )
        return model


def _zscore_topic(x: FloatArray, per_topic: Sequence[bool]) -> FloatArray:
    out = np.array(x, dtype=np.float64, copy=True)
    if out.shape[0] == 0:
        return out
    for j, flag in enumerate(per_topic):
        if flag:
            col = out[:, j]
            sd = float(col.std())
            out[:, j] = (col - col.mean()) / sd if sd > 1e-12 else 0.0
    return out


def _standardise(
    topics: Mapping[str, FloatArray],
    per_topic: Sequence[bool],
    center: Sequence[float],
    scale: Sequence[float],
) -> dict[str, FloatArray]:
    out = {}
    for qid in sorted(topics):
        z = _zscore_topic(topics[qid], per_topic)
        for j, flag in enumerate(per_topic):
            if not flag:
                z[:, j] = (z[:, j] - center[j]) / scale[j]
        out[qid] = z
    return out


def _check_rows(qid: str, x: FloatArray, width: int) -> None:
    if x.ndim != 2 or x.shape[1] != width:
        raise RelevanceModelError(
            f"topic {qid}: expected a features matrix with {width} columns, "
            f"got shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise RelevanceModelError(f"topic {qid}: features must be finite")


def logistic_fit(
    x: FloatArray, y: npt.NDArray[np.int64], w: FloatArray, c: float
) -> tuple[FloatArray, float]:
    """L2-penalised weighted logistic regression by Newton's method: minimises
    ``C · Σ w_i · logloss_i + ½ |β|²`` (intercept not penalised; scikit-learn's
    ``LogisticRegression(C=C)`` objective). A handful of iterations on a few columns:
    milliseconds for 100,000 rows."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.full(d + 1, 1.0 / c)
    penalty[-1] = 0.0
    beta = np.zeros(d + 1)
    target = y.astype(np.float64)
    for _ in range(100):
        p = _sigmoid(design @ beta)
        gradient = design.T @ (w * (p - target)) + penalty * beta
        curvature = w * p * (1.0 - p)
        hessian = (design * curvature[:, None]).T @ design + np.diag(penalty)
        hessian[np.diag_indices_from(hessian)] += 1e-10
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return beta[:-1].copy(), float(beta[-1])


def _sigmoid(z: FloatArray) -> FloatArray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)), dtype=np.float64)


def model_fit(
    topics: Mapping[str, TopicRows],
    *,
    weights: Mapping[str, FloatArray] | None = None,
    feature_names: Sequence[str] = FEATURE_NAMES,
    c: float | None = None,
    folds: int = 5,
    pool_relevant: float | None = None,
) -> RelevanceModel:
    """Fit on ``{qid: (raw features, labels)}``, labels 1 / 0 for judged documents and
    -1 for unjudged ones (which count for the per-topic z-scores only).

    ``pool_relevant``: an estimate of the number of relevant documents over all the
    rows (e.g. :func:`horvitz_thompson_relevant` of a probability sample); the fitted
    model is then anchored to it (:func:`anchor_shift`): its expected count, judged
    labels plus p of the unjudged rows, equals that estimate.

    ``c`` is the inverse L2 strength; None chooses it from :data:`C_GRID` by
    cross-validation over the topic folds (:func:`select_c`). ``weights`` (per topic,
    one per row) weight the judged rows, e.g. ``1 / inclusion probability`` of a
    sample; they are rescaled to mean 1. Calibration: Platt scaling
    on out-of-fold logits, ``folds`` groups of topics (none with fewer than 2 topics
    having both labels). Raises :class:`RelevanceModelError` without judged documents
    of both labels.
    """
    names = tuple(feature_names)
    per_topic = tuple(n not in TOPIC_FEATURES for n in names)
    raw: dict[str, FloatArray] = {}
    labels: dict[str, npt.NDArray[np.int64]] = {}
    for qid in sorted(topics):
        x, y = topics[qid]
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        _check_rows(qid, x, len(names))
        if y.shape != (x.shape[0],):
            raise RelevanceModelError(
                f"topic {qid}: {x.shape[0]} feature rows but {y.shape} labels"
            )
        raw[qid], labels[qid] = x, y
    judged = np.concatenate([y >= 0 for y in labels.values()]) if labels else None
    all_raw = np.vstack(list(raw.values())) if raw else np.zeros((0, len(names)))
    if judged is None or not judged.any():
        raise RelevanceModelError("no judged document to fit the relevance model on")
    rows = all_raw[judged]
    center = tuple(
        float(rows[:, j].mean()) if not flag else 0.0
        for j, flag in enumerate(per_topic)
    )
    scale = tuple(
        max(float(rows[:, j].std()), 1e-6) if not flag else 1.0
        for j, flag in enumerate(per_topic)
    )
    z = _standardise(raw, per_topic, center, scale)
    xs, ys, ws, groups = [], [], [], []
    for index, qid in enumerate(sorted(z)):
        keep = labels[qid] >= 0
        xs.append(z[qid][keep])
        ys.append(labels[qid][keep])
        w = (
            np.asarray(weights[qid], dtype=np.float64)[keep]
            if weights is not None and qid in weights
            else np.ones(int(keep.sum()))
        )
        ws.append(w)
        groups.append(np.full(int(keep.sum()), index))
    x_fit = np.vstack(xs)
    y_fit = (np.concatenate(ys) > 0).astype(np.int64)
    w_fit = np.concatenate(ws)
    if not np.all(np.isfinite(w_fit)) or np.any(w_fit < 0):
        raise RelevanceModelError("weights must be finite and >= 0")
    w_fit = w_fit * (len(w_fit) / max(float(w_fit.sum()), 1e-12))
    if len(set(y_fit.tolist())) < 2:
        raise RelevanceModelError(
            "the relevance model needs judged relevant and non-relevant documents"
        )
    group_fit = np.concatenate(groups)
    if c is None:
        c = select_c(x_fit, y_fit, w_fit, group_fit, folds)
    coef, intercept = logistic_fit(x_fit, y_fit, w_fit, c)
    calibration = _calibrate(x_fit, y_fit, w_fit, group_fit, c, folds, coef, intercept)
    shift = 0.0
    if pool_relevant is not None:
        slope, offset = calibration
        logits = {q: slope * (z[q] @ coef + intercept) + offset for q in z}
        shift = anchor_shift(logits, labels, pool_relevant)
    return RelevanceModel(
        feature_names=names,
        per_topic=per_topic,
        center=center,
        scale=scale,
        coef=tuple(float(v) for v in coef),
        intercept=intercept,
        calibration=calibration,
        c=c,
        fitted_rows=len(y_fit),
        shift=shift,
    )


# The anchoring shift is searched in [-SHIFT_BOUND, SHIFT_BOUND] logits (a factor of
# e^20 on the odds): beyond it the target is out of the model's reach and the bound is
# kept, rather than pushing every probability to exactly 0 or 1.
SHIFT_BOUND = 20.0


def horvitz_thompson_relevant(
    labels: Mapping[str, npt.NDArray[np.int64]],
    inverse_inclusion: Mapping[str, FloatArray],
) -> float:
    """Horvitz-Thompson estimate of the number of relevant documents of the pools,
    ``Σ y / π`` over the judged rows (labels 1 / 0; -1 unjudged), ``inverse_inclusion``
    giving ``1 / π`` per row: the sum over topics of statAP's estimated R. Unbiased
    when the judged rows are a probability sample of the pools drawn with those
    inclusion probabilities."""
    total = 0.0
    for qid in sorted(labels):
        y = np.asarray(labels[qid], dtype=np.int64)
        w = np.asarray(inverse_inclusion[qid], dtype=np.float64)
        if w.shape != y.shape:
            raise RelevanceModelError(
                f"topic {qid}: {y.shape[0]} labels but {w.shape[0]} inclusion weights"
            )
        total += float(np.sum(w[y > 0]))
    return total


def anchor_shift(
    logits: Mapping[str, FloatArray],
    labels: Mapping[str, npt.NDArray[np.int64]],
    target: float,
) -> float:
    """The one logit shift ``δ``, common to every topic, with
    ``Σ judged y + Σ unjudged sigmoid(logit + δ) = target``.

    The left side increases with ``δ``, so the root is unique; it is found by
    Newton's method safeguarded by bisection; a target below (above) what the shift can reach within
    ±:data:`SHIFT_BOUND` gives the bound. A shift adds the same amount to every
    logit: rankings within and across topics are unchanged, only the totals move.
    0 without unjudged rows."""
    if not math.isfinite(target):
        raise RelevanceModelError(f"the anchoring target must be finite, got {target}")
    judged_relevant = 0
    parts = []
    for qid in sorted(logits):
        y = np.asarray(labels[qid], dtype=np.int64)
        judged_relevant += int(np.sum(y > 0))
        parts.append(np.asarray(logits[qid], dtype=np.float64)[y < 0])
    unjudged = np.concatenate(parts) if parts else np.zeros(0)
    if unjudged.size == 0:
        return 0.0

    def excess(delta: float) -> float:
        return judged_relevant + float(np.sum(_sigmoid(unjudged + delta))) - target

    if excess(-SHIFT_BOUND) >= 0:
        return -SHIFT_BOUND
    if excess(SHIFT_BOUND) <= 0:
        return SHIFT_BOUND
    # Newton's method on ln Σ p = ln(target - judged relevant), nearly linear in the
    # shift while the p are small (Σ p ≈ e^δ Σ e^logit), or, when most unjudged rows
    # must be relevant, on -ln Σ (1 - p) for the same reason; bisecting when a step
    # would leave the bracket: a few passes over the rows (brentq needs about 15).
    wanted = target - judged_relevant
    mostly = wanted > unjudged.size / 2
    goal = math.log(unjudged.size - wanted if mostly else wanted)
    low, high, delta = -SHIFT_BOUND, SHIFT_BOUND, 0.0
    for _ in range(200):
        p = _sigmoid(unjudged + delta)
        total = float(np.sum(1.0 - p if mostly else p))
        value = math.log(total) - goal if total > 0 else -math.inf
        if mostly:
            value = -value
        if value > 0:
            high = delta
        else:
            low = delta
        slope = float(np.sum(p * (1.0 - p))) / total if total > 0 else 0.0
        step = delta - value / slope if slope > 0 else math.nan
        following = step if low <= step <= high else 0.5 * (low + high)
        if abs(following - delta) < 1e-10 or high - low < 1e-10:
            return following
        delta = following
    return delta


C_GRID: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def _fold_index(
    groups: npt.NDArray[np.int64], folds: int
) -> npt.NDArray[np.int64] | None:
    """Fold of every row (topics dealt round-robin), None below two folds."""
    topics = np.unique(groups)
    k = min(folds, len(topics))
    if k < 2:
        return None
    fold_of = {int(t): i % k for i, t in enumerate(topics.tolist())}
    return np.array([fold_of[int(g)] for g in groups.tolist()], dtype=np.int64)


def select_c(
    x: FloatArray,
    y: npt.NDArray[np.int64],
    w: FloatArray,
    groups: npt.NDArray[np.int64],
    folds: int,
    grid: Sequence[float] = C_GRID,
) -> float:
    """The inverse L2 strength of ``grid`` with the best out-of-fold weighted
    log-likelihood, folds being groups of topics (as for calibration): with few judged
    relevant documents per topic the weights of a lightly penalised fit follow the
    noise of the few training rows, and a stronger penalty wins on held-out topics;
    with many the weak penalty wins. Ties go to the smaller C (the simpler model).
    The largest C of the grid when folds cannot be formed."""
    fold = _fold_index(groups, folds)
    if fold is None:
        return float(max(grid))
    best, best_c = -math.inf, float(max(grid))
    for c in sorted(grid):
        logits = np.zeros(len(y))
        for f in np.unique(fold).tolist():
            train = fold != f
            if len(set(y[train].tolist())) < 2:
                return float(max(grid))
            cf, icpt = logistic_fit(x[train], y[train], w[train], c)
            logits[~train] = x[~train] @ cf + icpt
        p = np.clip(_sigmoid(logits), 1e-12, 1.0 - 1e-12)
        score = float(np.sum(w * (y * np.log(p) + (1 - y) * np.log(1.0 - p))))
        if score > best + 1e-9:
            best, best_c = score, c
    return best_c


def _calibrate(
    x: FloatArray,
    y: npt.NDArray[np.int64],
    w: FloatArray,
    groups: npt.NDArray[np.int64],
    c: float,
    folds: int,
    coef: FloatArray,
    intercept: float,
) -> tuple[float, float]:
    """Platt (slope, offset) on out-of-fold logits; identity when folds cannot be
    formed (fewer than two topics, or a fold's training part lacks a label)."""
    fold = _fold_index(groups, folds)
    if fold is None:
        return 1.0, 0.0
    logits = np.zeros(len(y))
    for f in np.unique(fold).tolist():
        train = fold != f
        if len(set(y[train].tolist())) < 2:
            return 1.0, 0.0
        cf, icpt = logistic_fit(x[train], y[train], w[train], c)
        logits[~train] = x[~train] @ cf + icpt
    slope, offset = logistic_fit(logits.reshape(-1, 1), y, w, 1e4)
    if not slope[0] > 0:
        return 1.0, 0.0
    return float(slope[0]), offset


def model_logits(
    model: RelevanceModel, topics: Mapping[str, FloatArray | TopicRows]
) -> dict[str, FloatArray]:
    """Calibrated logits per topic (see :func:`model_predict`)."""
    raw: dict[str, FloatArray] = {}
    for qid, value in topics.items():
        x = value[0] if isinstance(value, tuple) else value
        x = np.asarray(x, dtype=np.float64)
        _check_rows(qid, x, len(model.feature_names))
        raw[qid] = x
    z = _standardise(raw, model.per_topic, model.center, model.scale)
    coef = np.asarray(model.coef)
    slope, offset = model.calibration
    return {
        qid: slope * (z[qid] @ coef + model.intercept) + offset + model.shift
        for qid in z
    }


def model_predict(
    model: RelevanceModel, topics: Mapping[str, FloatArray | TopicRows]
) -> dict[str, FloatArray]:
    """Probability of relevance of every row, ``{qid: array in [0, 1]}``; ``topics``
    maps qid to raw features (or ``(features, labels)``; labels are ignored). The
    per-topic z-scores are those of the rows given, so pass a topic's whole pool."""
    return {
        qid: np.clip(_sigmoid(z), 0.0, 1.0)
        for qid, z in model_logits(model, topics).items()
    }
