"""A suite of diverse retrieval runs over one collection, for pooling experiments.

Pure and Django-free. :func:`run_suite` builds the indexes once and returns, per run
tag, ``{qid: [(docno, score), ...]}`` ranked in trec_eval order. The suite mixes strong
and deliberately weak systems so that pools, samples and system rankings look like a
real evaluation campaign's:

==================  ==========================================================
tag                 model
==================  ==========================================================
bm25                BM25 k1=1.2 b=0.75 (Porter stems)
bm25-k0.9-b0.4      BM25 with Anserini's defaults
bm25-k2.0-b0.75     BM25, strong tf saturation
bm25-k1.2-b1.0      BM25, full length normalisation
bm25-nostem         BM25 on unstemmed words
bm25l, bm25plus     rank_bm25's BM25L and BM25+ (independent library code)
tfidf               log-tf x idf cosine
ql-dir-2000         query likelihood, Dirichlet μ=2000
ql-dir-300          query likelihood, Dirichlet μ=300 (short documents)
ql-jm-0.1, -0.7     query likelihood, Jelinek-Mercer λ=0.1 / 0.7
bm25-rm3            BM25 + RM3 (10 documents, 20 terms, weight 0.5)
coord               coordination level: number of query terms matched (weak)
weak-short2         BM25 on the first two query terms only (weak)
weak-noise          BM25 plus Gaussian noise of two score deviations (weak)
weak-tinyvocab      BM25 restricted to the 300 most common terms (weak)
bm25-rf-qrels       optional: BM25 with relevance feedback from up to 3 qrels
                    relevant documents per topic (a "manual feedback" run)
==================  ==========================================================
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from rank_bm25 import BM25L, BM25Plus

from nuggets_app.errors import DomainError
from nuggets_app.learning import retrieval as rt

Ranking = list[tuple[str, float]]
ScoreFn = Callable[["SuiteContext", str, str], tuple[np.ndarray, np.ndarray]]


class RunSuiteError(DomainError):
    """A run tag the suite does not make."""


@dataclass
class SuiteContext:
    """Indexes and per-collection state shared by the runs of a suite."""

    stemmed: rt.InvertedIndex
    plain: rt.InvertedIndex
    tokens: list[list[str]]
    seed: int
    feedback: Mapping[str, list[str]]
    _bm25l: BM25L | None = None
    _bm25plus: BM25Plus | None = None
    _common: frozenset[str] | None = None

    def common_terms(self, size: int = 300) -> frozenset[str]:
        """The ``size`` terms with the largest document frequency."""
        if self._common is None:
            top = np.argsort(-self.stemmed.df, kind="stable")[:size]
            self._common = frozenset(rt.index_term(self.stemmed, j) for j in top)
        return self._common


def _bm25_run(**params: Any) -> ScoreFn:
    def score(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        query = ctx.stemmed.query(text)
        return rt.bm25(ctx.stemmed, query, **params), ctx.stemmed.matching(query)

    return score


def _simple(model: Callable[..., np.ndarray], **params: float) -> ScoreFn:
    def score(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        query = ctx.stemmed.query(text)
        return model(ctx.stemmed, query, **params), ctx.stemmed.matching(query)

    return score


def _nostem(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    query = ctx.plain.query(text)
    return rt.bm25(ctx.plain, query), ctx.plain.matching(query)


def _rank_bm25(kind: str) -> ScoreFn:
    def score(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        if kind == "l":
            ctx._bm25l = ctx._bm25l or BM25L(ctx.tokens)
            model = ctx._bm25l
        else:
            ctx._bm25plus = ctx._bm25plus or BM25Plus(ctx.tokens)
            model = ctx._bm25plus
        terms = ctx.stemmed.analyzer.terms(text)
        query = ctx.stemmed.query(text)
        return np.asarray(model.get_scores(terms)), ctx.stemmed.matching(query)

    return score


def _rm3(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    query = rt.rm3_query(ctx.stemmed, ctx.stemmed.query(text))
    return rt.bm25(ctx.stemmed, query), ctx.stemmed.matching(query)


def _short(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    terms = [t for t in ctx.stemmed.analyzer.terms(text) if t in ctx.stemmed.vocab]
    query = {t: 1.0 for t in dict.fromkeys(terms[:2])}
    return rt.bm25(ctx.stemmed, query), ctx.stemmed.matching(query)


def _noise(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    query = ctx.stemmed.query(text)
    scores, mask = rt.bm25(ctx.stemmed, query), ctx.stemmed.matching(query)
    # Seeded per topic so the run is reproducible whatever the topic order.
    rng = np.random.default_rng([ctx.seed, zlib.crc32(qid.encode())])
    spread = float(scores[mask].std()) if mask.any() else 0.0
    return scores + rng.normal(0.0, 2.0 * (spread or 1.0), size=scores.shape), mask


def _tiny(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    common = ctx.common_terms()
    query = {t: w for t, w in ctx.stemmed.query(text).items() if t in common}
    return rt.bm25(ctx.stemmed, query), ctx.stemmed.matching(query)


def _feedback(ctx: SuiteContext, qid: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    query = ctx.stemmed.query(text)
    relevant = ctx.feedback.get(qid, [])[:3]
    scores = rt.relevance_feedback_bm25(ctx.stemmed, query, relevant)
    return scores, scores > 0


RUNS: dict[str, ScoreFn] = {
    "bm25": _bm25_run(k1=1.2, b=0.75),
    "bm25-k0.9-b0.4": _bm25_run(k1=0.9, b=0.4),
    "bm25-k2.0-b0.75": _bm25_run(k1=2.0, b=0.75),
    "bm25-k1.2-b1.0": _bm25_run(k1=1.2, b=1.0),
    "bm25-nostem": _nostem,
    "bm25l": _rank_bm25("l"),
    "bm25plus": _rank_bm25("plus"),
    "tfidf": _simple(rt.tfidf),
    "ql-dir-2000": _simple(rt.ql_dirichlet, mu=2000.0),
    "ql-dir-300": _simple(rt.ql_dirichlet, mu=300.0),
    "ql-jm-0.1": _simple(rt.ql_jelinek_mercer, lam=0.1),
    "ql-jm-0.7": _simple(rt.ql_jelinek_mercer, lam=0.7),
    "bm25-rm3": _rm3,
    "coord": _simple(rt.coordination),
    "weak-short2": _short,
    "weak-noise": _noise,
    "weak-tinyvocab": _tiny,
}


def run_suite(
    docs: Iterable[tuple[str, str]],
    topics: Iterable[tuple[str, str]],
    *,
    depth: int = 1000,
    seed: int = 0,
    feedback: Mapping[str, list[str]] | None = None,
    tags: Iterable[str] | None = None,
) -> dict[str, dict[str, Ranking]]:
    """Rank ``(docno, text)`` documents for ``(qid, query text)`` topics with every run.

    ``feedback`` (qid → relevant docnos, e.g. from qrels) adds the ``bm25-rf-qrels`` run.
    A topic whose query has no indexed term is absent from that run.
    """
    docs = list(docs)
    stemmed = rt.InvertedIndex.build(docs)
    plain = rt.InvertedIndex.build(docs, rt.Analyzer(stem=False))
    tokens = [stemmed.analyzer.terms(text) for _, text in docs]
    ctx = SuiteContext(stemmed, plain, tokens, seed, feedback or {})
    runs = dict(RUNS)
    if feedback:
        runs["bm25-rf-qrels"] = _feedback
    chosen = list(tags) if tags is not None else list(runs)
    unknown = sorted(set(chosen) - set(runs))
    if unknown:
        raise RunSuiteError(f"unknown run tags: {', '.join(unknown)}")
    topics = list(topics)
    result: dict[str, dict[str, Ranking]] = {}
    for tag in chosen:
        per_topic: dict[str, Ranking] = {}
        for qid, text in topics:
            scores, mask = runs[tag](ctx, qid, text)
            ranking = rt.rank(ctx.stemmed, scores, mask=mask, depth=depth)
            if ranking:
                per_topic[qid] = ranking
        result[tag] = per_topic
    return result


def run_write(path: str, tag: str, rankings: Mapping[str, Ranking]) -> int:
    """Write one run as a TREC run file (``qid Q0 docno rank score tag``); lines written."""
    lines = 0
    with open(path, "w", encoding="utf-8") as out:
        for qid in sorted(rankings, key=_qid_key):
            for position, (docno, score) in enumerate(rankings[qid], start=1):
                out.write(f"{qid} Q0 {docno} {position} {score:.12g} {tag}\n")
                lines += 1
    return lines


def _qid_key(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)
