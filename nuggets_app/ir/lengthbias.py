"""Length bias of judgments (Losada, Azzopardi & Baillie).

Documents of the collection are sorted by length (ties by docno) and cut into ``B``
bins of equal size (sizes differ by at most one). For a set of judgments
(``(qid, docno) -> rel``; one entry per judged topic/document pair), per bin:

* ``judged_share = judged pairs in the bin / all judged pairs``;
* ``relevant_share = relevant pairs in the bin / all relevant pairs``;
* ``p_rel_given_judged = relevant pairs in the bin / judged pairs in the bin``.

Without bias each share is about ``1/B``. Human and inferred qrels are binned over the
same collection bins so they can be shown side by side. Mann-Whitney U tests (two
sided, scipy) compare the length distributions of the collection, the judged pairs,
the relevant pairs and the pairs inferred relevant.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scipy import stats

DEFAULT_BINS = 10

Judgments = Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class LengthBin:
    """One equal-size bin of the collection by length, and the judgments in it."""

    index: int
    documents: int
    min_length: int
    max_length: int
    judged: int
    relevant: int
    judged_share: float
    relevant_share: float
    p_rel_given_judged: float


@dataclass(frozen=True)
class LengthTest:
    """A two-sided Mann-Whitney U test between two length samples."""

    first: str
    second: str
    n_first: int
    n_second: int
    u: float
    p_value: float
    median_first: float
    median_second: float


def length_bins(
    lengths: Mapping[str, int], *, bins: int = DEFAULT_BINS
) -> dict[str, int]:
    """``docno -> bin index`` for ``bins`` equal-size bins of the collection by length."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    ordered = sorted(lengths, key=lambda d: (lengths[d], d))
    n = len(ordered)
    size, extra = divmod(n, bins)
    assignment: dict[str, int] = {}
    start = 0
    for b in range(bins):
        end = start + size + (1 if b < extra else 0)
        for docno in ordered[start:end]:
            assignment[docno] = b
        start = end
    return assignment


def length_bias_table(
    lengths: Mapping[str, int],
    judgments: Judgments,
    *,
    bins: int = DEFAULT_BINS,
    level: int = 1,
) -> list[LengthBin]:
    """Per-bin counts and shares for one set of judgments (``rel >= level`` relevant).

    Judgments of documents outside ``lengths`` are ignored.
    """
    assignment = length_bins(lengths, bins=bins)
    docs = [0] * bins
    low = [math.inf] * bins
    high = [-math.inf] * bins
    for docno, b in assignment.items():
        docs[b] += 1
        low[b] = min(low[b], lengths[docno])
        high[b] = max(high[b], lengths[docno])
    judged = [0] * bins
    relevant = [0] * bins
    for (_qid, docno), rel in judgments.items():
        found = assignment.get(docno)
        if found is None:
            continue
        judged[found] += 1
        relevant[found] += rel >= level
    all_judged, all_relevant = sum(judged), sum(relevant)
    return [
        LengthBin(
            index=b,
            documents=docs[b],
            min_length=int(low[b]) if docs[b] else 0,
            max_length=int(high[b]) if docs[b] else 0,
            judged=judged[b],
            relevant=relevant[b],
            judged_share=judged[b] / all_judged if all_judged else math.nan,
            relevant_share=relevant[b] / all_relevant if all_relevant else math.nan,
            p_rel_given_judged=relevant[b] / judged[b] if judged[b] else math.nan,
        )
        for b in range(bins)
    ]


def mann_whitney(first: str, a: list[int], second: str, b: list[int]) -> LengthTest:
    """Two-sided Mann-Whitney U test of two length samples (NaN if one is empty)."""
    if not a or not b:
        u = p = math.nan
    else:
        result = stats.mannwhitneyu(a, b, alternative="two-sided")
        u, p = float(result.statistic), float(result.pvalue)
    med_a = float(sorted(a)[len(a) // 2]) if a else math.nan
    med_b = float(sorted(b)[len(b) // 2]) if b else math.nan
    return LengthTest(first, second, len(a), len(b), u, p, med_a, med_b)


def length_samples(
    lengths: Mapping[str, int],
    human: Judgments,
    inferred: Judgments | None = None,
    *,
    level: int = 1,
) -> dict[str, list[int]]:
    """Length samples: collection, judged, relevant and inferred relevant pairs."""
    samples = {
        "collection": list(lengths.values()),
        "judged": [lengths[d] for (_q, d) in human if d in lengths],
        "relevant": [
            lengths[d] for (_q, d), r in human.items() if r >= level and d in lengths
        ],
    }
    if inferred is not None:
        samples["inferred_relevant"] = [
            lengths[d] for (_q, d), r in inferred.items() if r >= level and d in lengths
        ]
    return samples


def length_tests(
    lengths: Mapping[str, int],
    human: Judgments,
    inferred: Judgments | None = None,
    *,
    level: int = 1,
) -> list[LengthTest]:
    """Mann-Whitney U tests between the length samples of :func:`length_samples`.

    Pairs: collection/judged, collection/relevant, judged/relevant and, with inferred
    qrels, collection/inferred relevant and relevant/inferred relevant.
    """
    samples = length_samples(lengths, human, inferred, level=level)
    pairs = [
        ("collection", "judged"),
        ("collection", "relevant"),
        ("judged", "relevant"),
    ]
    if inferred is not None:
        pairs += [
            ("collection", "inferred_relevant"),
            ("relevant", "inferred_relevant"),
        ]
    return [mann_whitney(a, samples[a], b, samples[b]) for a, b in pairs]
