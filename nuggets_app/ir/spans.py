"""Unions and intersections of character spans.

Django-free. A span is a half-open character interval ``[start, end)`` into one
document's canonical text; a set of spans stands for the characters it covers.
"""

from __future__ import annotations

from collections.abc import Iterable

Span = tuple[int, int]


def merge_spans(spans: Iterable[Span]) -> list[Span]:
    """Sorted, disjoint spans covering the same characters (overlaps and touching
    spans are merged; empty spans dropped)."""
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def text_segments(text: str, spans: Iterable[Span]) -> list[tuple[str, bool]]:
    """``text`` cut at the merged spans (clipped to the text) into ``(piece,
    highlighted?)`` pieces, in order; for ``<mark>`` on a page."""
    clipped = ((max(0, s), min(len(text), e)) for s, e in spans)
    out: list[tuple[str, bool]] = []
    pos = 0
    for start, end in merge_spans(clipped):
        if start > pos:
            out.append((text[pos:start], False))
        out.append((text[start:end], True))
        pos = end
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def covered_chars(spans: Iterable[Span]) -> int:
    """Number of distinct characters covered by the spans."""
    return sum(end - start for start, end in merge_spans(spans))


def intersect_chars(a: Iterable[Span], b: Iterable[Span]) -> int:
    """Number of characters covered by both span sets (linear merge of the unions)."""
    ma, mb = merge_spans(a), merge_spans(b)
    i = j = total = 0
    while i < len(ma) and j < len(mb):
        lo = max(ma[i][0], mb[j][0])
        hi = min(ma[i][1], mb[j][1])
        if hi > lo:
            total += hi - lo
        # Advance the interval that ends first: it cannot meet anything further on.
        if ma[i][1] <= mb[j][1]:
            i += 1
        else:
            j += 1
    return total


def span_reanchor(text: str, span_text: str, near: int) -> int | None:
    """Where ``span_text`` starts in ``text``: the occurrence nearest to the old start
    ``near`` (the earlier one on a tie), or None when the text no longer contains it."""
    if not span_text:
        return None
    best: int | None = None
    at = text.find(span_text)
    while at != -1:
        if best is None or abs(at - near) < abs(best - near):
            best = at
        at = text.find(span_text, at + 1)
    return best
