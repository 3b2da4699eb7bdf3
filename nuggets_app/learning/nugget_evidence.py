"""Nugget-level evidence for the relevance model: each nugget weighed by what it did on
the judged documents (the optional ``nugget_evidence`` features, off by default).

Pure and Django-free. The lexical nugget features of
:mod:`nuggets_app.learning.relevance_features` treat every nugget alike: a mean BM25,
a mean min-span score, a share of nuggets matched. A nugget that matches judged
non-relevant documents as often as relevant ones (a generic phrase) counts as much as
one that only ever matches relevant ones. Here each nugget ``n`` is described by the
judged documents its min-span score reaches (score > 0), its own source document left
out (a nugget always matches where it was cut):

``nugget_noisy_or``
    ``1 - Π_n (1 - q_n s_n)`` over the topic's nuggets not extracted from ``d``, with
    ``s_n`` the min-span score of ``d`` for ``n`` and ``q_n = (r_n + 1) / (m_n + 2)``
    the nugget's precision on the judged documents it matches (``r_n`` relevant of
    ``m_n``, Laplace-smoothed; 1/2 for a nugget that matches no judged document): the
    probability that at least one nugget truly matches, each match calibrated on the
    judged documents (a noisy-OR).
``nugget_recurrence``
    The mean of ``s_n`` weighted by ``r_n``, the number of judged relevant documents
    the nugget matches: nuggets that recur across relevant documents are the topic's
    core (0 when no nugget matches a judged relevant document).

Leave-one-out as for every feature: the counts of ``d``'s own features never include
``d`` (its label stays out) and the nuggets extracted from ``d`` are left out, so a
judged document is described as an unjudged one would be.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

NUGGET_EVIDENCE_NAMES: tuple[str, ...] = ("nugget_noisy_or", "nugget_recurrence")


@dataclass(frozen=True)
class NuggetRecord:
    """Per nugget id: its source docno and the judged documents it matches."""

    sources: Mapping[str, str | None]
    relevant: Mapping[str, frozenset[str]]
    nonrelevant: Mapping[str, frozenset[str]]


def nugget_record(
    *,
    sources: Mapping[str, str | None],
    judged: Mapping[str, bool],
    minspan: Mapping[str, Mapping[str, float]],
) -> NuggetRecord:
    """What each nugget (``{id: source docno}``) did on the judged documents
    (``{docno: relevant?}``), from the min-span scores ``{docno: {nugget id:
    score}}``; a nugget's own source never counts."""
    relevant: dict[str, set[str]] = {n: set() for n in sources}
    nonrelevant: dict[str, set[str]] = {n: set() for n in sources}
    for docno in sorted(judged):
        for nugget, score in (minspan.get(docno) or {}).items():
            if score > 0 and nugget in sources and sources[nugget] != docno:
                (relevant if judged[docno] else nonrelevant)[nugget].add(docno)
    return NuggetRecord(
        sources=dict(sources),
        relevant={n: frozenset(v) for n, v in relevant.items()},
        nonrelevant={n: frozenset(v) for n, v in nonrelevant.items()},
    )


def nugget_evidence_features(
    record: NuggetRecord, docno: str, minspan: Mapping[str, float] | None
) -> tuple[float, float]:
    """``(nugget_noisy_or, nugget_recurrence)`` of one document (module docstring);
    ``minspan`` maps nugget id to the document's min-span score (absent: 0)."""
    if not minspan:
        return 0.0, 0.0
    log_miss = 0.0
    weighted = weights = 0.0
    for nugget, source in sorted(record.sources.items()):
        if source == docno:
            continue
        score = min(max(float(minspan.get(nugget, 0.0)), 0.0), 1.0)
        if score <= 0:
            continue
        hits = len(record.relevant[nugget] - {docno})
        misses = len(record.nonrelevant[nugget] - {docno})
        precision = (hits + 1.0) / (hits + misses + 2.0)
        log_miss += math.log1p(-precision * score)
        weighted += hits * score
    for nugget, source in sorted(record.sources.items()):
        if source != docno:
            weights += len(record.relevant[nugget] - {docno})
    recurrence = weighted / weights if weights > 0 else 0.0
    return -math.expm1(log_miss), recurrence
