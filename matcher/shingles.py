"""Nugget shingles (docs/reference/algorithms.md 4.2) and the distinct-shingle table of a topic."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple


class Shingle(NamedTuple):
    """A distinct shingle: a multiset of processed terms.

    ``key`` is the sorted term tuple (order ignored, repeats kept); ``need``
    maps each distinct term to how many positions it must occupy; ``size``
    is the shingle's k (its number of terms).
    """

    key: tuple[str, ...]
    need: dict[str, int]
    size: int


def nugget_shingles(terms: Sequence[str], k: int) -> list[tuple[str, ...]]:
    """Shingles of a nugget's processed terms, in order, duplicates kept.

    ``m >= k``: the ``m - k + 1`` runs of k consecutive terms; ``1 <= m < k``:
    one shingle of all m terms; ``m == 0``: none (the nugget is unusable).
    """
    m = len(terms)
    if m == 0:
        return []
    if m < k:
        return [tuple(terms)]
    return [tuple(terms[i : i + k]) for i in range(m - k + 1)]


def shingle_of(terms: Sequence[str]) -> Shingle:
    """The multiset form of one shingle."""
    return Shingle(tuple(sorted(terms)), dict(Counter(terms)), len(terms))


class ShingleTable:
    """The distinct shingles of a topic, each stored once with an index."""

    def __init__(self) -> None:
        self.shingles: list[Shingle] = []
        self._index: dict[tuple[str, ...], int] = {}

    def add(self, terms: Sequence[str]) -> int:
        """Index of the shingle made of ``terms``, adding it when new."""
        return self.add_shingle(shingle_of(terms))

    def add_shingle(self, shingle: Shingle) -> int:
        """Index of ``shingle`` (never mutated: it may be shared), adding it when new."""
        index = self._index.get(shingle.key)
        if index is None:
            index = self._index[shingle.key] = len(self.shingles)
            self.shingles.append(shingle)
        return index

    def __len__(self) -> int:
        return len(self.shingles)
