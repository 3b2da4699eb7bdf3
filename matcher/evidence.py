"""Lambda-free match evidence and re-scoring without the document text.

``S`` (the smallest window of each shingle) does not depend on lambda, so a
stored :class:`Evidence` re-scores a document for any new lambda:
``shingleScore = lam ** ((S - k) / k)``, 0 for an unmatched shingle,
``nuggetScore`` = mean over the nugget's shingles, document score = max over
nuggets, ties to the first nugget in input order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from .options import MatcherError


class NuggetEvidence(NamedTuple):
    """One nugget's windows: ``lengths[i]`` is S of shingle i (None: unmatched)."""

    nugget: str
    lengths: tuple[int | None, ...]
    sizes: tuple[int, ...]

    def score(self, lam: float) -> float:
        """Mean over shingles of ``lam ** ((S - k) / k)`` (0 when unmatched)."""
        return nugget_score(self.lengths, self.sizes, lam)

    def exponents(self) -> list[float | None]:
        """``(S - k) / k`` per shingle, for vectorised re-scoring (``lam ** e``)."""
        return [
            None if s is None else (s - k) / k
            for s, k in zip(self.lengths, self.sizes, strict=True)
        ]


def nugget_score(
    lengths: Sequence[int | None], sizes: Sequence[int], lam: float
) -> float:
    """Mean shingle score of one nugget, from its window lengths and sizes."""
    total = 0.0
    for s, k in zip(lengths, sizes, strict=True):
        if s is not None:
            total += lam ** ((s - k) / k)
    return total / len(sizes)


@dataclass(frozen=True)
class Evidence:
    """Per-nugget window lengths of one document, nuggets in input order.

    Holds only nuggets with at least one matched shingle that pass their
    keyword gate; every other nugget scores 0 for this document.
    """

    nuggets: tuple[NuggetEvidence, ...] = ()

    def to_json(self) -> dict[str, list[int | None]]:
        """``{nugget id: [S or null per shingle]}``; sizes come from the nuggets."""
        return {item.nugget: list(item.lengths) for item in self.nuggets}

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], sizes: Mapping[str, Sequence[int]]
    ) -> Evidence:
        """Rebuild evidence stored by :meth:`to_json`.

        ``sizes`` maps every usable nugget id to its shingle sizes, in nugget
        input order (``TopicMatcher.shingle_sizes``); that order breaks ties,
        whatever order the stored object's keys come back in.
        """
        if not isinstance(data, Mapping):
            raise MatcherError("evidence: must be a JSON object")
        unknown = [key for key in data if key not in sizes]
        if unknown:
            raise MatcherError(f"evidence: unknown nugget {unknown[0]!r}")
        items = []
        for nugget, shingle_sizes in sizes.items():
            if nugget in data:
                lengths = _lengths(nugget, data[nugget], shingle_sizes)
                items.append(NuggetEvidence(nugget, lengths, tuple(shingle_sizes)))
        return cls(tuple(items))

    def best(self, lam: float) -> tuple[float, str | None]:
        """``(score, best nugget id)`` for ``lam``; ``(0.0, None)`` when nothing matches."""
        return rescore(self, lam)


def _lengths(nugget: str, values: Any, sizes: Sequence[int]) -> tuple[int | None, ...]:
    if not isinstance(values, list | tuple) or len(values) != len(sizes):
        raise MatcherError(
            f"evidence[{nugget!r}]: must be a list of {len(sizes)} window lengths"
        )
    for s, k in zip(values, sizes, strict=True):
        if s is not None and (isinstance(s, bool) or not isinstance(s, int) or s < k):
            raise MatcherError(
                f"evidence[{nugget!r}]: window length {s!r} is not an integer >= {k}"
            )
    return tuple(values)


@lru_cache(maxsize=32)
def _decay_table(lam: float) -> dict[tuple[int, int], float]:
    return {}


def _memo_nugget_score(
    lengths: Sequence[int | None],
    sizes: Sequence[int],
    lam: float,
    decay: dict[tuple[int, int], float],
) -> float:
    """:func:`nugget_score`, each ``lam ** ((S - k) / k)`` computed once per ``(S, k)``
    and kept in ``decay`` (a table for this ``lam`` only)."""
    total = 0.0
    for s, k in zip(lengths, sizes, strict=True):
        if s is not None:
            value = decay.get((s, k))
            if value is None:
                value = decay[(s, k)] = lam ** ((s - k) / k)
            total += value
    return total / len(sizes)


def check_lam(lam: float) -> float:
    """Validate a decay lambda: a number in (0, 1]."""
    if isinstance(lam, bool) or not isinstance(lam, int | float) or not 0 < lam <= 1:
        raise MatcherError(f"lam: must be in (0, 1], got {lam!r}")
    return lam


def rescore(evidence: Evidence, lam: float) -> tuple[float, str | None]:
    """Document score and best nugget for a new ``lam``, without the text."""
    check_lam(lam)
    decay = _decay_table(lam)
    best = 0.0
    best_nugget = None
    for nugget, lengths, sizes in evidence.nuggets:
        score = _memo_nugget_score(lengths, sizes, lam, decay)
        if score > best:
            best, best_nugget = score, nugget
    return best, best_nugget


class Rescorer:
    """Fast re-scoring of stored JSON evidence for one topic and one ``lam``.

    ``sizes`` maps every usable nugget id to its shingle sizes in nugget
    input order (``TopicMatcher.shingle_sizes``); that order breaks ties.
    Stored values are trusted (they were written by :meth:`Evidence.to_json`).
    """

    def __init__(self, sizes: Mapping[str, Sequence[int]], lam: float) -> None:
        self.lam = check_lam(lam)
        self._sizes = {nugget: tuple(k) for nugget, k in sizes.items()}
        self._order = {nugget: i for i, nugget in enumerate(self._sizes)}
        self._decay: dict[tuple[int, int], float] = {}

    def __call__(
        self, data: Mapping[str, Sequence[int | None]]
    ) -> tuple[float, str | None]:
        """``(score, best nugget id)`` of one document's stored evidence."""
        lam = self.lam
        decay = self._decay
        order = self._order
        best = 0.0
        best_nugget = None
        for nugget, lengths in data.items():
            sizes = self._sizes.get(nugget)
            if sizes is None:
                continue
            score = _memo_nugget_score(lengths, sizes, lam, decay)
            if score > best or (
                score == best
                and best_nugget is not None
                and order[nugget] < order[best_nugget]
            ):
                best, best_nugget = score, nugget
        return best, best_nugget


def rescore_json(
    data: Mapping[str, Sequence[int | None]],
    sizes: Mapping[str, Sequence[int]],
    lam: float,
) -> tuple[float, str | None]:
    """:func:`rescore` straight from the stored JSON form of one document.

    For many documents build one :class:`Rescorer` and call it per document.
    """
    return Rescorer(sizes, lam)(data)
