"""Ranked retrieval over an in-memory inverted index: the models behind ``make_runs``.

Pure and Django-free. Documents are ``(docno, text)`` pairs; every model returns one
score per document of the index, and :func:`rank` turns scores into a TREC ranking
(only documents that contain a query term, score descending, then docno descending as
trec_eval orders ties).

Models (``tf`` = term frequency in the document, ``dl`` = document length in terms,
``avgdl`` its mean, ``N`` documents, ``df`` document frequency, ``cf`` collection
frequency, ``|C|`` collection length, ``qtf`` frequency in the query):

* BM25: ``Σ qtf · idf · tf (k1 + 1) / (tf + k1 (1 - b + b dl/avgdl))`` with
  ``idf = ln(1 + (N - df + 0.5)/(df + 0.5))`` (Lucene) or ``ln((N - df + 0.5)/(df + 0.5))``
  (Robertson; as rank_bm25's BM25Okapi while ``df < N/2``).
* TF-IDF: cosine of ``(1 + ln tf) · ln(N/df)`` vectors (lnc.ltc without query norm).
* Query likelihood, Dirichlet: ``Σ qtf · ln((tf + μ cf/|C|) / (dl + μ))``;
  Jelinek-Mercer: ``Σ qtf · ln((1 - λ) tf/dl + λ cf/|C|)``.
* BM25 + RM3 pseudo relevance feedback, and BM25 with true relevance feedback
  (Robertson/Spärck Jones weights, expansion terms chosen by offer weight).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from nltk.stem.porter import PorterStemmer
from scipy import sparse

TOKEN_RE = re.compile(r"[^\W_]+")

# A short English stopword list (function words only); the matcher ships its own.
_STOPWORD_TEXT = """a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing down
during each few for from further had has have having he her here hers herself him himself
his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that
the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you
your yours yourself yourselves also may might must shall upon within without whether"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_STEMMER = PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_STEMMER.stem(word))


@dataclass(frozen=True)
class Analyzer:
    """Text to index terms: casefold, ``[^\\W_]+`` tokens, stopwords out, Porter stems."""

    stem: bool = True
    stopwords: frozenset[str] = STOPWORDS

    def terms(self, text: str) -> list[str]:
        """The index terms of ``text`` in order (stopwords occupy no position)."""
        words = TOKEN_RE.findall(text.casefold())
        kept = [w for w in words if w not in self.stopwords]
        return [_stem(w) for w in kept] if self.stem else kept


@dataclass
class InvertedIndex:
    """Term frequencies as a sparse documents x terms matrix, plus collection statistics."""

    docnos: list[str]
    vocab: dict[str, int]
    tf: sparse.csc_matrix
    analyzer: Analyzer = field(default_factory=Analyzer)

    def __post_init__(self) -> None:
        self.doc_len = np.asarray(self.tf.sum(axis=1)).ravel().astype(float)
        self.df = np.diff(self.tf.indptr).astype(float)
        self.cf = np.asarray(self.tf.sum(axis=0)).ravel().astype(float)
        self.total_len = float(self.doc_len.sum())
        self.avgdl = self.total_len / max(len(self.docnos), 1)
        self.position = {docno: i for i, docno in enumerate(self.docnos)}
        # Rank of each docno in byte-wise order, for trec_eval's tie-break.
        by_bytes = sorted(
            range(len(self.docnos)), key=lambda i: self.docnos[i].encode()
        )
        self.docno_order = np.empty(len(self.docnos), dtype=np.int64)
        self.docno_order[by_bytes] = np.arange(len(self.docnos))
        self._inverse: dict[int, str] | None = None

    @classmethod
    def build(
        cls, docs: Iterable[tuple[str, str]], analyzer: Analyzer | None = None
    ) -> InvertedIndex:
        """Index ``(docno, text)`` pairs; docnos must be unique."""
        analyzer = analyzer or Analyzer()
        docnos: list[str] = []
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[int] = []
        for row, (docno, text) in enumerate(docs):
            docnos.append(docno)
            for term, count in Counter(analyzer.terms(text)).items():
                rows.append(row)
                cols.append(vocab.setdefault(term, len(vocab)))
                vals.append(count)
        if len(set(docnos)) != len(docnos):
            raise ValueError("duplicate docno in the documents to index")
        shape = (len(docnos), len(vocab))
        tf = sparse.csc_matrix((vals, (rows, cols)), shape=shape, dtype=float)
        return cls(docnos=docnos, vocab=vocab, tf=tf, analyzer=analyzer)

    @property
    def num_docs(self) -> int:
        return len(self.docnos)

    def query(self, text: str) -> dict[str, float]:
        """Analyse a query into ``{term: qtf}``, keeping only terms of the vocabulary."""
        counts = Counter(self.analyzer.terms(text))
        return {t: float(c) for t, c in counts.items() if t in self.vocab}

    def column(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """Posting list of ``term``: (document rows, term frequencies)."""
        j = self.vocab[term]
        start, end = self.tf.indptr[j], self.tf.indptr[j + 1]
        return self.tf.indices[start:end], self.tf.data[start:end]

    def matching(self, query: Mapping[str, float]) -> np.ndarray:
        """Boolean mask of documents that contain at least one query term."""
        mask = np.zeros(self.num_docs, dtype=bool)
        for term in query:
            mask[self.column(term)[0]] = True
        return mask


Query = Mapping[str, float]


def idf_weights(index: InvertedIndex, term: str, kind: str = "lucene") -> float:
    """BM25 idf of ``term``: ``lucene`` (always positive) or ``robertson``."""
    n, df = index.num_docs, index.df[index.vocab[term]]
    ratio = (n - df + 0.5) / (df + 0.5)
    return math.log1p(ratio) if kind == "lucene" else math.log(ratio)


def bm25(
    index: InvertedIndex,
    query: Query,
    *,
    k1: float = 1.2,
    b: float = 0.75,
    idf: str = "lucene",
    term_weights: Mapping[str, float] | None = None,
) -> np.ndarray:
    """BM25 scores; ``term_weights`` replaces idf per term (relevance feedback)."""
    scores = np.zeros(index.num_docs)
    norm = k1 * (1.0 - b + b * index.doc_len / max(index.avgdl, 1e-12))
    for term, qtf in query.items():
        rows, tf = index.column(term)
        weight = term_weights[term] if term_weights else idf_weights(index, term, idf)
        scores[rows] += qtf * weight * tf * (k1 + 1.0) / (tf + norm[rows])
    return scores


def tfidf(index: InvertedIndex, query: Query) -> np.ndarray:
    """Cosine of log-tf x idf document vectors with the log-tf x idf query vector."""
    idf = np.log(index.num_docs / np.maximum(index.df, 1.0))
    weighted = index.tf.copy()
    weighted.data = 1.0 + np.log(weighted.data)
    weighted = weighted.multiply(idf).tocsc()
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    scores = np.zeros(index.num_docs)
    for term, qtf in query.items():
        j = index.vocab[term]
        start, end = weighted.indptr[j], weighted.indptr[j + 1]
        rows = weighted.indices[start:end]
        scores[rows] += (1.0 + math.log(qtf)) * idf[j] * weighted.data[start:end]
    cosine: np.ndarray = scores / np.maximum(norms, 1e-12)
    return cosine


def ql_dirichlet(
    index: InvertedIndex, query: Query, *, mu: float = 2000.0
) -> np.ndarray:
    """Query likelihood with Dirichlet smoothing (log probability)."""
    scores = np.zeros(index.num_docs)
    denom = np.log(index.doc_len + mu)
    for term, qtf in query.items():
        p_c = index.cf[index.vocab[term]] / index.total_len
        tf = np.zeros(index.num_docs)
        rows, freqs = index.column(term)
        tf[rows] = freqs
        scores += qtf * (np.log(tf + mu * p_c) - denom)
    return scores


def ql_jelinek_mercer(
    index: InvertedIndex, query: Query, *, lam: float = 0.5
) -> np.ndarray:
    """Query likelihood with Jelinek-Mercer smoothing (log probability)."""
    scores = np.zeros(index.num_docs)
    doc_len = np.maximum(index.doc_len, 1.0)
    for term, qtf in query.items():
        p_c = index.cf[index.vocab[term]] / index.total_len
        tf = np.zeros(index.num_docs)
        rows, freqs = index.column(term)
        tf[rows] = freqs
        scores += qtf * np.log((1.0 - lam) * tf / doc_len + lam * p_c)
    return scores


def coordination(index: InvertedIndex, query: Query) -> np.ndarray:
    """Number of distinct query terms a document contains (a boolean-style model)."""
    scores = np.zeros(index.num_docs)
    for term in query:
        scores[index.column(term)[0]] += 1.0
    return scores


def rm3_query(
    index: InvertedIndex,
    query: Query,
    *,
    fb_docs: int = 10,
    fb_terms: int = 20,
    original_weight: float = 0.5,
) -> dict[str, float]:
    """RM3 expansion: ``w·q/|q| + (1-w)·P(t|R)`` over the top BM25 documents.

    ``P(t|R) ∝ Σ_d s(d) tf(t,d)/dl(d)`` with ``s`` the BM25 scores normalised to sum 1,
    truncated to the ``fb_terms`` most likely terms and renormalised.
    """
    if not query:
        return {}
    scores = bm25(index, query)
    top = [r for r in np.argsort(-scores, kind="stable")[:fb_docs] if scores[r] > 0]
    if not top:
        return dict(query)
    weights = scores[top] / scores[top].sum()
    sub = index.tf.tocsr()[top]
    lengths = np.maximum(index.doc_len[top], 1.0)
    model = np.asarray((sparse.diags(weights / lengths) @ sub).sum(axis=0)).ravel()
    best = np.argsort(-model, kind="stable")[:fb_terms]
    terms = {index_term(index, j): model[j] for j in best if model[j] > 0}
    total_fb = sum(terms.values()) or 1.0
    total_q = sum(query.values())
    expanded = {t: original_weight * w / total_q for t, w in query.items()}
    for term, weight in terms.items():
        expanded[term] = (
            expanded.get(term, 0.0) + (1 - original_weight) * weight / total_fb
        )
    return expanded


def index_term(index: InvertedIndex, j: int) -> str:
    """The term of vocabulary column ``j``."""
    if index._inverse is None:
        index._inverse = {col: term for term, col in index.vocab.items()}
    return index._inverse[j]


def relevance_feedback_bm25(
    index: InvertedIndex,
    query: Query,
    relevant: Iterable[str],
    *,
    expansion_terms: int = 20,
    k1: float = 1.2,
    b: float = 0.75,
) -> np.ndarray:
    """BM25 with true relevance feedback from judged relevant docnos.

    Term weight = Robertson/Spärck Jones relevance weight
    ``w = ln(((r+.5)(N-n-R+r+.5)) / ((n-r+.5)(R-r+.5)))`` with ``R`` judged relevant
    documents, ``r`` of them containing the term; the query gains the
    ``expansion_terms`` terms of the relevant documents with the largest offer weight
    ``r·w``. Without relevant documents this is plain BM25.
    """
    rows = sorted({index.position[d] for d in relevant if d in index.position})
    if not rows:
        return bm25(index, query, k1=k1, b=b)
    big_r, n_docs = float(len(rows)), float(index.num_docs)
    r = np.asarray((index.tf.tocsr()[rows] > 0).sum(axis=0)).ravel().astype(float)
    n = index.df
    rsj = np.log(
        ((r + 0.5) * (n_docs - n - big_r + r + 0.5))
        / ((n - r + 0.5) * (big_r - r + 0.5))
    )
    offer = np.where(r > 0, r * rsj, -np.inf)
    best = [j for j in np.argsort(-offer, kind="stable")[:expansion_terms] if r[j] > 0]
    expanded = dict(query)
    for j in best:
        expanded.setdefault(index_term(index, j), 1.0)
    weights = {t: max(float(rsj[index.vocab[t]]), 0.0) for t in expanded}
    return bm25(index, expanded, k1=k1, b=b, term_weights=weights)


def rank(
    index: InvertedIndex,
    scores: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    depth: int = 1000,
) -> list[tuple[str, float]]:
    """Top ``depth`` ``(docno, score)`` among masked documents, trec_eval order.

    trec_eval orders by score descending, then docno descending (byte-wise).
    """
    rows = np.flatnonzero(mask) if mask is not None else np.arange(index.num_docs)
    order = np.lexsort((-index.docno_order[rows], -scores[rows]))[:depth]
    return [(index.docnos[i], float(scores[i])) for i in rows[order]]
