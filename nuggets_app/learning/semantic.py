"""Semantic evidence: which window of a text is nearest to which nugget, and how near.

Pure and Django-free; the embeddings come from :mod:`nuggets_app.learning.embeddings`
(or any function of the same shape, so tests and callers can pass stored vectors).

A text is cut into *windows* (:func:`text_windows`): sentences (a line break, or a
``.``, ``!`` or ``?`` followed by a space and a capital, quote or bracket, ends one),
packed greedily, in order, while the window stays within ``max_words`` words; a
sentence longer than that is cut at word boundaries into pieces of ``max_words``
words (so a text without sentence marks, e.g. lower-cased, is still read whole and
no window exceeds what the model reads, 256 tokens). ``max_words`` of 0 or 1 gives
one window per sentence, whatever its length (TREC TS's units are sentences). Offsets are character
``[start, end)`` into the text, as the matcher's spans.

The semantic score of a (text, nugget) pair is the highest cosine similarity of the
nugget's embedding to a window's, floored at 0 (:func:`best_windows`); the window
reaching it is the evidence shown to people.

The combined score (:func:`combined_score`) is ``w · minspan + (1 - w) · semantic``,
both in [0, 1], so the paper's decision rule (score >= a threshold) reads it as it
reads min-span's score; ``w`` is :data:`DEFAULT_WEIGHT` unless measured otherwise
(docs/results/semantic.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Embed = Callable[[Sequence[str]], Matrix]
DEFAULT_MAX_WORDS = 60
DEFAULT_WEIGHT = 0.5
_SENTENCE_END = re.compile(r"\n+|(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"\S+")


class Window(NamedTuple):
    """A piece of a text that is embedded as one unit: ``text[start:end]``."""

    start: int
    end: int


class WindowMatch(NamedTuple):
    """The window of a text nearest to a nugget and its cosine similarity (>= 0)."""

    window: int
    similarity: float


def _sentences(text: str) -> list[Window]:
    out: list[Window] = []
    start = 0
    for cut in [*_SENTENCE_END.finditer(text), None]:
        end = cut.start() if cut else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append(Window(start + lead, start + len(piece.rstrip())))
        if cut:
            start = cut.end()
    return out


def _pieces(text: str, sentence: Window, max_words: int) -> list[tuple[Window, int]]:
    words = list(_WORD.finditer(text, sentence.start, sentence.end))
    if len(words) <= max_words:
        return [(sentence, len(words))]
    return [
        (
            Window(words[i].start(), words[min(i + max_words, len(words)) - 1].end()),
            min(max_words, len(words) - i),
        )
        for i in range(0, len(words), max_words)
    ]


def text_windows(text: str, *, max_words: int = DEFAULT_MAX_WORDS) -> list[Window]:
    """The windows of ``text`` (module doc): whole sentences packed up to
    ``max_words`` words, long sentences cut; with ``max_words`` 0 or 1, one window
    per sentence. None for a blank text."""
    if max_words <= 1:
        return _sentences(text)
    windows: list[Window] = []
    words = 0
    for sentence in _sentences(text):
        for piece, count in _pieces(text, sentence, max_words):
            if windows and words + count <= max_words:
                windows[-1] = Window(windows[-1].start, piece.end)
                words += count
            else:
                windows.append(piece)
                words = count
    return windows


def best_windows(windows: Matrix, nuggets: Matrix) -> list[WindowMatch]:
    """For each nugget (row of ``nuggets``) the nearest window (row of ``windows``),
    both L2-normalised; similarity floored at 0. Empty windows: similarity 0."""
    best, similarity = nearest_windows(windows, nuggets)
    return [WindowMatch(*pair) for pair in zip(best, similarity, strict=True)]


def nearest_windows(windows: Matrix, nuggets: Matrix) -> tuple[list[int], list[float]]:
    """:func:`best_windows` as two lists, the windows' indices (-1: no window) and the
    similarities: whole-array steps, for the judging page, which asks for every
    topic nugget at every move."""
    if len(windows) == 0:
        return [-1] * len(nuggets), [0.0] * len(nuggets)
    sims = nuggets @ windows.T
    best = sims.argmax(axis=1)
    found = np.maximum(sims[np.arange(len(best)), best], 0.0)
    return best.tolist(), found.tolist()


def combined_score(minspan: float, semantic: float, *, weight: float) -> float:
    """``weight · minspan + (1 - weight) · semantic`` (module doc)."""
    return weight * minspan + (1.0 - weight) * semantic


class EmbeddingCache:
    """Embeddings of texts computed once: ``vectors(texts)`` embeds only new texts."""

    def __init__(self, embed: Embed, dimension: int) -> None:
        self._embed = embed
        self._rows: dict[str, int] = {}
        self._matrix = np.zeros((0, dimension), dtype=np.float32)

    def __len__(self) -> int:
        return len(self._rows)

    def vectors(self, texts: Sequence[str]) -> Matrix:
        """The embeddings of ``texts`` in order, computing the ones not seen yet."""
        new = list(dict.fromkeys(t for t in texts if t not in self._rows))
        if new:
            self._rows.update({t: len(self._rows) + i for i, t in enumerate(new)})
            self._matrix = np.vstack([self._matrix, self._embed(new)])
        out: Matrix = self._matrix[[self._rows[t] for t in texts]]
        return out
