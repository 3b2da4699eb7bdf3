"""Learning-to-rank training sets: features, SVMlight/LETOR lines and topic folds.

Pure and Django-free. A training set has one row per (topic, document) with a grade
(human where judged, else inferred) and the feature vector of :data:`FEATURES`,
computed here from the documents' title and text, the topic's query, and two scores
the caller passes in (the matcher's min-span score and the relevance model's p).

Lines follow SVMlight/LETOR: ``rel qid:Q 1:v 2:v ... # docno source``, features
numbered from 1 in :data:`FEATURES` order, every feature written (dense), rows grouped
by topic (what LightGBM and ``sklearn.datasets.load_svmlight_file(query_id=True)``
need). Topics are dealt into ``k`` folds by a seeded shuffle of their qids, so the
same seed gives the same folds on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nuggets_app.errors import DomainError
from nuggets_app.learning import retrieval

FloatArray = npt.NDArray[np.float64]

# Dirichlet priors: titles are a few terms long, so a small prior; texts the usual one.
MU_TITLE = 100.0
MU_TEXT = 2000.0


@dataclass(frozen=True)
class Feature:
    """One column of the training set: its number is its 1-based position."""

    name: str
    description: str


FEATURES: tuple[Feature, ...] = (
    Feature("bm25_text", "BM25 (k1=1.2, b=0.75, Lucene idf) of the query on the text"),
    Feature(
        "bm25_title", "BM25 (k1=1.2, b=0.75, Lucene idf) of the query on the title"
    ),
    Feature(
        "ql_text",
        f"query likelihood, Dirichlet mu={MU_TEXT:g}, on the text (log probability)",
    ),
    Feature(
        "ql_title",
        f"query likelihood, Dirichlet mu={MU_TITLE:g}, on the title (log probability)",
    ),
    Feature("tfidf_text", "cosine of log-tf x idf vectors, query against the text"),
    Feature(
        "coverage_text",
        "fraction of the distinct query terms that occur in the title or text",
    ),
    Feature("log_len_text", "ln(1 + text length in index terms)"),
    Feature("log_len_title", "ln(1 + title length in index terms)"),
    Feature(
        "matcher_score",
        "the matching job's min-span score of the document's best nugget (0 when "
        "no nugget matches)",
    ),
    Feature(
        "model_p",
        "the job's relevance model probability, not overridden by judgments (0 when "
        "the job has no fitted model)",
    ),
)
FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in FEATURES)
# The features that read only the document and the query: the learning-to-rank
# experiment trains on these, since the labels inferred from a job are a function of
# the last two.
TEXT_FEATURES: tuple[str, ...] = FEATURE_NAMES[:8]


class LtrError(DomainError):
    """A training set cannot be made as asked; the message says why."""


@dataclass
class FieldIndexes:
    """Inverted indexes of the collection's titles and texts (same document rows)."""

    title: retrieval.InvertedIndex
    text: retrieval.InvertedIndex

    @classmethod
    def build(cls, docs: Iterable[tuple[str, str, str]]) -> FieldIndexes:
        """Index ``(docno, title, text)`` triples; collection statistics come from
        every document given, so pass the whole collection."""
        rows = list(docs)
        title = retrieval.InvertedIndex.build((d, t) for d, t, _ in rows)
        text = retrieval.InvertedIndex.build((d, x) for d, _, x in rows)
        return cls(title=title, text=text)


def _at(values: FloatArray, rows: npt.NDArray[np.int64]) -> FloatArray:
    out: FloatArray = values[rows].astype(np.float64)
    return out


def topic_features(
    indexes: FieldIndexes,
    query_text: str,
    docnos: Sequence[str],
    matcher_scores: Sequence[float],
    model_p: Sequence[float],
) -> FloatArray:
    """The :data:`FEATURES` matrix (one row per docno, in order) for one topic."""
    if not len(docnos) == len(matcher_scores) == len(model_p):
        raise LtrError("docnos, matcher scores and model p differ in length")
    missing = [d for d in docnos if d not in indexes.text.position]
    if missing:
        raise LtrError(f"documents not in the index: {', '.join(missing[:5])}")
    rows = np.array([indexes.text.position[d] for d in docnos], dtype=np.int64)
    q_text = indexes.text.query(query_text)
    q_title = indexes.title.query(query_text)
    present = np.zeros(len(rows))
    distinct = set(q_text) | set(q_title)
    for term in distinct:
        hit = np.zeros(indexes.text.num_docs, dtype=bool)
        if term in indexes.text.vocab:
            hit[indexes.text.column(term)[0]] = True
        if term in indexes.title.vocab:
            hit[indexes.title.column(term)[0]] = True
        present += hit[rows]
    columns = [
        _at(retrieval.bm25(indexes.text, q_text), rows),
        _at(retrieval.bm25(indexes.title, q_title), rows),
        _at(retrieval.ql_dirichlet(indexes.text, q_text, mu=MU_TEXT), rows),
        _at(retrieval.ql_dirichlet(indexes.title, q_title, mu=MU_TITLE), rows),
        _at(retrieval.tfidf(indexes.text, q_text), rows),
        present / max(len(distinct), 1),
        np.log1p(indexes.text.doc_len[rows]),
        np.log1p(indexes.title.doc_len[rows]),
        np.asarray(matcher_scores, dtype=np.float64),
        np.asarray(model_p, dtype=np.float64),
    ]
    matrix: FloatArray = np.column_stack(columns).astype(np.float64)
    return matrix


def _value(v: float) -> str:
    if not math.isfinite(v):
        raise LtrError(f"feature value {v} is not finite")
    text = f"{v:.6g}"
    return "0" if text == "-0" else text


def svmlight_line(
    rel: int, qid: int, features: Sequence[float], comment: str = ""
) -> str:
    """``rel qid:Q 1:v 2:v ... # comment`` (every feature, numbered from 1)."""
    values = " ".join(f"{j}:{_value(float(v))}" for j, v in enumerate(features, 1))
    tail = f" # {comment}" if comment else ""
    return f"{int(rel)} qid:{qid} {values}{tail}"


def numeric_qids(qids: Iterable[str]) -> dict[str, int]:
    """SVMlight needs integer qids: the qid itself when every qid is a non-negative
    integer, else 1, 2, ... in sorted qid order."""
    ordered = sorted(
        set(qids), key=lambda q: (not q.isdigit(), int(q) if q.isdigit() else 0, q)
    )
    if all(q.isdigit() for q in ordered):
        return {q: int(q) for q in ordered}
    return {q: i for i, q in enumerate(ordered, 1)}


def topic_folds(qids: Iterable[str], k: int = 5, seed: int = 1) -> dict[str, int]:
    """{qid: fold in 1..k}: sorted qids shuffled with ``seed``, dealt round-robin
    (fold sizes differ by at most one)."""
    ordered = sorted(set(qids))
    if k < 2:
        raise LtrError(f"need at least 2 folds, got {k}")
    if len(ordered) < k:
        raise LtrError(f"{len(ordered)} topics cannot fill {k} folds")
    random.Random(seed).shuffle(ordered)
    return {q: i % k + 1 for i, q in enumerate(ordered)}


def features_description(
    names: Sequence[str] = FEATURE_NAMES,
) -> str:
    """The features file: ``number<TAB>name<TAB>description`` per feature."""
    by_name: Mapping[str, Feature] = {f.name: f for f in FEATURES}
    return "".join(
        f"{j}\t{name}\t{by_name[name].description}\n" for j, name in enumerate(names, 1)
    )
