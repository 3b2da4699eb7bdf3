"""Smallest window holding a shingle's multiset, in linear time (docs/reference/algorithms.md 4.3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import sub


def min_span(terms: Sequence[str], need: Mapping[str, int]) -> tuple[int, int] | None:
    """``(S, start)`` of the earliest smallest window of ``terms`` holding ``need``.

    ``need`` maps each distinct shingle term to its multiplicity; ``S`` counts
    processed-token positions (``last - first + 1``). None when a term is
    missing or has too few copies.
    """
    positions: dict[str, list[int]] = {term: [] for term in need}
    for pos, term in enumerate(terms):
        found = positions.get(term)
        if found is not None:
            found.append(pos)
    return window(positions, need, terms)


def window(
    positions: Mapping[str, list[int]], need: Mapping[str, int], terms: Sequence[str]
) -> tuple[int, int] | None:
    """Min window from ascending position lists of each needed term.

    ``terms[pos]`` names the term at a position. Single-term shingles take a
    closed form; others run the two-pointer scan over the merged positions.
    """
    for term, count in need.items():
        if len(positions[term]) < count:
            return None
    if len(need) == 1:
        ((term, count),) = need.items()
        return _repeated(positions[term], count)
    # The lists are ascending runs, so timsort merges them in linear time.
    occ = sorted([pos for term in need for pos in positions[term]])
    return _scan(occ, need, terms)


def _repeated(found: list[int], count: int) -> tuple[int, int]:
    if count == 1:
        return 1, found[0]
    gaps = list(map(sub, found[count - 1 :], found))
    best = min(gaps)
    return best + 1, found[gaps.index(best)]


def _scan(
    occ: list[int], need: Mapping[str, int], terms: Sequence[str]
) -> tuple[int, int] | None:
    have = dict.fromkeys(need, 0)
    missing = len(need)
    best = len(terms) + 1
    start = -1
    left = 0
    for right in occ:
        term = terms[right]
        count = have[term] + 1
        have[term] = count
        if count == need[term]:
            missing -= 1
        # Shrink from the left while the window still holds the multiset;
        # a strictly shorter window replaces the best, so ties keep the earliest.
        while not missing:
            first = occ[left]
            if right - first < best - 1:
                best = right - first + 1
                start = first
            term = terms[first]
            count = have[term]
            have[term] = count - 1
            if count == need[term]:
                missing += 1
            left += 1
    return (best, start) if start >= 0 else None
