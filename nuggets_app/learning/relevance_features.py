"""The inference model's features: what describes a pooled document for the model.

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
    :func:`nuggets_app.learning.retrieval.relevance_feedback_bm25`). Plain BM25 of the
    topic statement when no other judged document is relevant.
``relevant_similarity`` / ``nonrelevant_similarity``
    The mean cosine similarity of ``d`` to the judged relevant (non-relevant)
    documents other than ``d``, documents as L2-normalised ``(1 + ln tf) · idf``
    vectors (Rocchio's centroids; 0 without such a document). A mean over the other
    documents has the same expectation whether or not ``d`` was judged, which BM25
    with feedback from one document fewer has not.
``minspan_mean`` / ``minspan_matched``
    The min-span matcher's nugget scores of ``d`` (docs/reference/algorithms.md section 4) over the
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

The model fitted on these features is :mod:`nuggets_app.learning.relevance_model`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from nuggets_app.errors import DomainError

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


class RelevanceModelError(DomainError):
    """The model cannot be fitted or read as asked; the message says why."""


# --- BM25 -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusStats:
    """BM25 statistics of the documents features are computed over."""

    n_docs: int
    avg_len: float
    df: Mapping[str, int]
    # idf of each term asked for so far: a job's features ask for the same few
    # thousand terms hundreds of thousands of times (same value, computed once).
    _idf: dict[str, float] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def from_tokens(cls, documents: Iterable[Terms]) -> CorpusStats:
        """Statistics of documents given as term lists."""
        n_docs, total, df = corpus_sums(documents)
        return cls(n_docs, total / n_docs if n_docs else 0.0, dict(df))

    def idf(self, term: str) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))`` (always positive)."""
        value = self._idf.get(term)
        if value is None:
            df = min(self.df.get(term, 0), self.n_docs)
            value = self._idf[term] = math.log1p((self.n_docs - df + 0.5) / (df + 0.5))
        return value


def corpus_sums(documents: Iterable[Terms]) -> tuple[int, int, Counter[str]]:
    """Document count, total length and document frequencies of term lists: the sums
    behind :class:`CorpusStats` (integers, so parts of a corpus add up exactly)."""
    df: Counter[str] = Counter()
    n_docs = total = 0
    for terms in documents:
        n_docs += 1
        total += len(terms)
        df.update(set(terms))
    return n_docs, total, df


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
