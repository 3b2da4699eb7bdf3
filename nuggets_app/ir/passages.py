"""Character-level passage measures: HARD track (Wade & Allan) and INEX in-context.

Specification: docs/reference/algorithms.md section 5. Spans are half-open character ranges
``(start, end)`` in a document's canonical text; a passage run is a ranked list of
``Passage(docno, start, length)``.

HARD (5.1): the passages are concatenated into one character stream whose characters
are labelled ``R`` (relevant, first retrieval), ``N`` (judged document, outside the
relevant spans), ``U`` (document nobody judged) or ``D`` (retrieved before). The stream
is kept as segments (maximal runs of one label). With ``rel(x)`` the R characters among
the first x positions and ``R`` all relevant characters:

* ``P@x = rel(x)/x``; ``P@min(N,R)``; character R-precision ``P@R``;
* ``bpref@X = (1/X) Σ_{first X R-characters c} (1 - min(n_c, X)/X)``, ``n_c`` the N/D
  characters before c (U characters are ignored but occupy positions);
* character AP ``= (1/R) Σ_{R-char c} rel(pos c)/pos c``; an R segment of L characters
  after position a with k relevant before it adds ``L + (k - a)(H(a+L) - H(a))``.

INEX (5.2), per retrieved article d: ``P = ok/|ret|``, ``Rc = ok/|hl|``,
``S = (1+β²)·P·Rc/(β²·P + Rc)`` (0 if nothing highlighted, nothing returned or no
overlap); ``gP[r] = Σ_{i<=r} S(d_i)/r``, ``gR[r] = Σ isrel/Trel``,
``gR'[r] = Σ rsize/Tchars``; ``AgP = (1/Trel) Σ_r isrel(d_r)·gP[r]``,
``AgP' = Σ_r (rsize(d_r)/Tchars)·gP[r]``; MAgP is the mean of AgP over topics.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from nuggets_app.errors import DomainError
from nuggets_app.ir.spans import Span, covered_chars, intersect_chars, merge_spans

DEFAULT_N = 12_000
_DIRECT_LIMIT = 1_000  # harmonic terms summed one by one below this denominator


class PassageError(DomainError):
    """Passage input that cannot be scored (a negative offset, an article ranked twice)."""


class Passage(NamedTuple):
    """One retrieved passage: ``length`` characters from ``start`` in ``docno``."""

    docno: str
    start: int
    length: int


def _covers(spans: list[Span], start: int) -> bool:
    """Whether the merged ``spans`` contain character ``start``."""
    i = bisect.bisect_right(spans, (start, math.inf)) - 1
    return i >= 0 and spans[i][0] <= start < spans[i][1]


def passage_stream(
    run: Sequence[Passage], judged: Mapping[str, Sequence[Span]]
) -> list[tuple[str, int]]:
    """Label the concatenated passages: ``[(label, length), ...]`` segments.

    ``judged`` maps every judged document to its relevant spans (empty for a judged
    non-relevant document); documents absent from it are unjudged.
    """
    relevant = {docno: merge_spans(spans) for docno, spans in judged.items()}
    seen: dict[str, list[Span]] = {}
    segments: list[tuple[str, int]] = []
    for passage in run:
        if passage.length < 0 or passage.start < 0:
            raise PassageError(f"passage with negative start or length: {passage}")
        start, end = passage.start, passage.start + passage.length
        before = seen.get(passage.docno, [])
        spans = relevant.get(passage.docno)
        cuts = {start, end}
        for a, b in [*before, *(spans or [])]:
            cuts.update(x for x in (a, b) if start < x < end)
        points = sorted(cuts)
        for u, v in itertools.pairwise(points):
            if _covers(before, u):
                label = "D"
            elif spans is None:
                label = "U"
            else:
                label = "R" if _covers(spans, u) else "N"
            if segments and segments[-1][0] == label:
                segments[-1] = (label, segments[-1][1] + v - u)
            else:
                segments.append((label, v - u))
        seen[passage.docno] = merge_spans([*before, (start, end)])
    return segments


def harmonic_diff(a: int, length: int) -> float:
    """``H(a + length) - H(a)`` without summing millions of terms.

    Small denominators are summed directly; the rest uses the asymptotic series of
    the digamma function, ``H(n) = digamma(n+1) + Euler gamma``, accurate to about 1e-16 there.
    """
    total = 0.0
    i, end = a, a + length
    while i < end and i < _DIRECT_LIMIT:
        i += 1
        total += 1 / i
    if i < end:
        x1, x2 = i + 1.0, end + 1.0
        total += math.log1p((x2 - x1) / x1)
        total += (1 / x1 - 1 / x2) / 2
        total += (1 / x1**2 - 1 / x2**2) / 12
        total -= (1 / x1**4 - 1 / x2**4) / 120
        total += (1 / x1**6 - 1 / x2**6) / 252
    return total


def precision_at(segments: Sequence[tuple[str, int]], x: int) -> float:
    """``P@x``: relevant characters among the first x positions, over x."""
    if x <= 0:
        return math.nan
    position = found = 0
    for label, length in segments:
        take = min(length, x - position)
        if take <= 0:
            break
        if label == "R":
            found += take
        position += take
    return found / x


def bpref_at(segments: Sequence[tuple[str, int]], x: int) -> float:
    """``bpref@X`` over the first X relevant characters of the stream."""
    if x <= 0:
        return math.nan
    counted = nonrel = 0
    total = 0.0
    for label, length in segments:
        if label in ("N", "D"):
            nonrel += length
        elif label == "R" and counted < x:
            take = min(length, x - counted)
            total += take * (1 - min(nonrel, x) / x)
            counted += take
    return total / x


def char_ap(segments: Sequence[tuple[str, int]], relevant: int) -> float:
    """Character average precision, computed per segment in closed form."""
    if relevant <= 0:
        return math.nan
    position = found = 0
    total = 0.0
    for label, length in segments:
        if label == "R":
            total += length + (found - position) * harmonic_diff(position, length)
            found += length
        position += length
    return total / relevant


@dataclass(frozen=True)
class HardScores:
    """The HARD track character measures of one topic (NaN when R is 0)."""

    relevant: int
    retrieved: int
    p_at_min_n_r: float
    r_precision: float
    bpref_at_r: float
    bpref_at_min_n_r: float
    char_ap: float


def hard_measures(
    run: Sequence[Passage], judged: Mapping[str, Sequence[Span]], *, n: int = DEFAULT_N
) -> HardScores:
    """HARD measures of a passage run against relevant spans of judged documents."""
    segments = passage_stream(run, judged)
    total = sum(covered_chars(spans) for spans in judged.values())
    cutoff = min(n, total)
    return HardScores(
        relevant=total,
        retrieved=sum(length for _, length in segments),
        p_at_min_n_r=precision_at(segments, cutoff),
        r_precision=precision_at(segments, total),
        bpref_at_r=bpref_at(segments, total),
        bpref_at_min_n_r=bpref_at(segments, cutoff),
        char_ap=char_ap(segments, total),
    )


@dataclass(frozen=True)
class InexScores:
    """In-context measures of one topic (AgP and AgP' NaN when Trel is 0)."""

    relevant_articles: int
    relevant_chars: int
    gp: tuple[float, ...]
    gr: tuple[float, ...]
    gr_prime: tuple[float, ...]
    agp: float
    agp_prime: float

    def gp_at(self, rank: int) -> float:
        """``gP[rank]``; past the end of the list the sum stays and r grows."""
        if rank <= len(self.gp):
            return self.gp[rank - 1]
        last = self.gp[-1] * len(self.gp) if self.gp else 0.0
        return last / rank


def articles_from_passages(run: Sequence[Passage]) -> list[tuple[str, list[Span]]]:
    """Group a passage run by article, articles ranked by their first passage."""
    grouped: dict[str, list[Span]] = {}
    for passage in run:
        grouped.setdefault(passage.docno, []).append(
            (passage.start, passage.start + passage.length)
        )
    return list(grouped.items())


def f_score(
    returned: Sequence[Span], highlighted: Sequence[Span], beta: float
) -> float:
    """``S(d)``: F_β of character precision and recall within one article."""
    ok = intersect_chars(returned, highlighted)
    if ok == 0:
        return 0.0
    precision = ok / covered_chars(returned)
    recall = ok / covered_chars(highlighted)
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def inex_measures(
    articles: Sequence[tuple[str, Sequence[Span]]],
    highlighted: Mapping[str, Sequence[Span]],
    *,
    beta: float = 1.0,
) -> InexScores:
    """gP, gR, gR', AgP and AgP' of a ranked list of ``(docno, returned spans)``.

    ``highlighted`` maps documents to their relevant spans (judged non-relevant
    documents may map to an empty list).
    """
    docnos = [docno for docno, _ in articles]
    if len(set(docnos)) != len(docnos):
        raise PassageError("an article appears twice in the ranking")
    rsize = {d: covered_chars(spans) for d, spans in highlighted.items()}
    trel = sum(1 for size in rsize.values() if size > 0)
    tchars = sum(rsize.values())
    gp, gr, gr_prime = [], [], []
    sum_s = sum_rel = sum_chars = 0.0
    agp = agp_prime = 0.0
    for rank, (docno, returned) in enumerate(articles, 1):
        size = rsize.get(docno, 0)
        sum_s += f_score(returned, highlighted.get(docno, []), beta) if size else 0.0
        gp.append(sum_s / rank)
        if size > 0:
            sum_rel += 1
            sum_chars += size
            agp += gp[-1] / trel
            agp_prime += size / tchars * gp[-1]
        gr.append(sum_rel / trel if trel else math.nan)
        gr_prime.append(sum_chars / tchars if tchars else math.nan)
    if trel == 0:
        agp = agp_prime = math.nan
    return InexScores(
        trel, tchars, tuple(gp), tuple(gr), tuple(gr_prime), agp, agp_prime
    )


def magp(topics: Iterable[InexScores]) -> tuple[float, float]:
    """MAgP and MAgP': means of AgP and AgP' over topics with relevant articles."""
    defined = [t for t in topics if t.relevant_articles > 0]
    if not defined:
        return (math.nan, math.nan)
    n = len(defined)
    return (sum(t.agp for t in defined) / n, sum(t.agp_prime for t in defined) / n)
