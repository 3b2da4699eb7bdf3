"""Text pipeline shared by nuggets and documents (docs/reference/algorithms.md 4.1).

1. Unicode casefold; 2. tokens are maximal runs of ``[^\\W_]+``; 3. tokens in
the stopword list are dropped (matched unstemmed); 4. NLTK Porter stemming
(default mode). Positions count processed tokens only; every token keeps its
character offsets ``[start, end)`` in the original text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import accumulate, compress, islice
from pathlib import Path
from typing import NamedTuple

from .options import MatchOptions
from .stems import StemTable, nltk_version, porter_stem_function, porter_table

TOKEN_RE = re.compile(r"[^\W_]+")
STOPWORDS_PATH = Path(__file__).with_name("data") / "stopwords_en.txt"
# Bounds the memory of the term cache on huge vocabularies (misspellings,
# numbers); refilling it costs a few stems, not correctness.
_CACHE_LIMIT = 200_000
_STORED_LIMIT = 2_000_000


class Token(NamedTuple):
    """A processed token: its term (stem) and offsets in the original text."""

    term: str
    start: int
    end: int


@lru_cache(maxsize=1)
def default_stopwords() -> frozenset[str]:
    """The shipped English stopword list (casefolded words)."""
    words = set()
    for line in STOPWORDS_PATH.read_text(encoding="utf-8").splitlines():
        word = line.strip()
        if word and not word.startswith("#"):
            words.add(word.casefold())
    return frozenset(words)


@lru_cache(maxsize=8)
def pipeline_version(options: MatchOptions | None = None) -> str:
    """Identifies the text pipeline; stored scores are stale when it changes.

    Combines the stemmer (with the NLTK version) and a digest of the stopword
    list, e.g. ``porter/nltk-3.10.4;stopwords/default-1a2b3c4d5e6f``.
    """
    import hashlib  # here, not at the top: a cold start rarely needs it

    options = options or MatchOptions()
    stem = "none"
    if options.stem == "porter":
        stem = f"porter/nltk-{nltk_version()}"
    words = default_stopwords() if options.stopwords == "default" else frozenset()
    digest = hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()[:12]
    return f"{stem};stopwords/{options.stopwords}-{digest}"


class _TermCache(dict[str, str]):
    """Casefolded token -> stem, or ``""`` for a stopword; filled on demand.

    ``dict.__getitem__`` calls ``__missing__`` only on a miss, so ``map`` over
    a document's tokens stays in C for every term seen before. Porter stems
    come from the persistent stem table (:mod:`matcher.stems`) when it has
    them; NLTK is imported and run only for the terms it lacks.
    """

    def __init__(self, stopwords: frozenset[str], stem: bool) -> None:
        super().__init__()
        self._stopwords = stopwords
        self._stem = stem
        self._stemmer: Callable[[str], str] | None = None
        self._table: StemTable | None = None
        self._stored: dict[str, str] = {}
        if stem:
            self._table = porter_table()
            self._stored = self._table.load()

    def __missing__(self, token: str) -> str:
        if token in self._stopwords:
            term = ""
        elif not self._stem:
            term = token
        else:
            stored = self._stored.get(token)
            if stored is None:
                if self._stemmer is None:
                    self._stemmer = porter_stem_function()
                stored = self._stemmer(token) or token
                if len(self._stored) >= _STORED_LIMIT:
                    self._stored.clear()
                self._stored[token] = stored
                if self._table is not None:
                    self._table.add(token, stored)
            term = stored
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[token] = term
        return term

    def save(self) -> None:
        """Write the stems computed so far to the persistent table."""
        if self._table is not None:
            self._table.save()


class _AsciiTermCache(dict[bytes, str]):
    """The same mapping keyed by ASCII bytes tokens (the fast path's tokens)."""

    def __init__(self, terms: _TermCache) -> None:
        super().__init__()
        self._terms = terms

    def __missing__(self, token: bytes) -> str:
        text = token.decode("ascii")
        terms = self._terms
        # A stopword or a stem already stored is resolved here, in one call (a cold
        # start misses on every distinct term); the rest goes through the text cache.
        if text in terms._stopwords:
            term = ""
        else:
            term = terms._stored.get(text) or terms[text]
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        self[token] = term
        return term


@lru_cache(maxsize=8)
def term_caches(stem: str, stopwords: str) -> tuple[_TermCache, _AsciiTermCache]:
    """The process-wide term caches of one (stem, stopwords) configuration."""
    words = default_stopwords() if stopwords == "default" else frozenset()
    terms = _TermCache(words, stem == "porter")
    # The caches fill from the stem table term by term, not up front: entering a large
    # table's every term makes the hot lookups slower (a bigger, less local dict).
    return terms, _AsciiTermCache(terms)


def stems_save() -> None:
    """Write every stem computed in this process to the persistent stem table."""
    if porter_table.cache_info().currsize:
        porter_table().save()


def _ascii_fold_table() -> bytes:
    # Letters and digits map to their lower case, everything else to a space:
    # on ASCII text this equals casefold + [^\W_]+ and runs at memory speed.
    table = bytearray(b" " * 256)
    for byte in b"abcdefghijklmnopqrstuvwxyz0123456789":
        table[byte] = byte
    for byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[byte] = byte + 32
    return bytes(table)


_ASCII_FOLD = _ascii_fold_table()
_ASCII_TOKEN_RE = re.compile(rb"[a-z0-9]+")


class PreparedText:
    """A text run through the pipeline once, reusable across topics.

    ``terms`` holds the processed tokens (positions are list indices); it is built
    on first use, since most documents are ruled out by :meth:`present` alone.
    Character offsets are recovered only on request (:meth:`spans`), since
    most documents never need them.
    """

    __slots__ = ("_mapped", "_origin", "_raw", "_source", "_terms", "_text", "pipeline")

    def __init__(self, text: str, options: MatchOptions) -> None:
        terms_cache, ascii_cache = term_caches(options.stem, options.stopwords)
        source: bytes | str
        if text.isascii():
            source = text.encode("ascii").translate(_ASCII_FOLD)
            mapped = list(map(ascii_cache.__getitem__, source.split()))
        else:
            source = text.casefold()
            mapped = list(map(terms_cache.__getitem__, TOKEN_RE.findall(source)))
        self.pipeline = (options.stem, options.stopwords)
        self._text = text
        self._source = source
        self._mapped = mapped
        self._raw: list[int] | None = None
        self._origin: list[int] | None = None
        self._terms: list[str] | None = None

    @property
    def terms(self) -> list[str]:
        """The processed terms, in position order."""
        terms = self._terms
        if terms is None:
            terms = self._terms = list(filter(None, self._mapped))
        return terms

    def present(self, vocabulary: frozenset[str]) -> frozenset[str]:
        """The terms of ``vocabulary`` the text holds (without building ``terms``)."""
        # A stopword maps to "", which no vocabulary holds.
        return vocabulary.intersection(self._mapped)

    def spans(self, windows: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
        """Original-text ``[start, end)`` of each ``(first, last)`` position pair."""
        windows = list(windows)
        if not windows:
            return []
        if isinstance(self._source, bytes):
            return self._ascii_spans(windows)
        if self._raw is None:
            # Processed position -> index among all tokens (stopwords included).
            self._raw = list(compress(range(len(self._mapped)), self._mapped))
        raw = self._raw
        last = max(raw[position] for pair in windows for position in pair)
        matches = list(islice(TOKEN_RE.finditer(self._source), last + 1))
        spans = [(matches[raw[a]].start(), matches[raw[b]].end()) for a, b in windows]
        return self._unfold(spans) if len(self._source) != len(self._text) else spans

    def _ascii_spans(self, windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # Splitting on single spaces keeps one (possibly empty) piece per
        # separator, so piece i starts at sum(len(pieces[:i])) + i; every step
        # below runs in C except the handful of positions asked for.
        lengths = list(map(len, self._source.split(b" ")))  # type: ignore[arg-type]
        pieces = list(compress(compress(range(len(lengths)), lengths), self._mapped))
        spans = []
        for first, last in windows:
            start = pieces[first]
            end = pieces[last]
            offset = sum(islice(lengths, start)) + start
            spans.append(
                (offset, offset + sum(lengths[start:end]) + end - start + lengths[end])
            )
        return spans

    def _unfold(self, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # Casefolding expanded some characters (e.g. "ß" -> "ss"); no character
        # folds to nothing, so equal lengths mean offsets need no mapping.
        if self._origin is None:
            self._origin = [
                i for i, ch in enumerate(self._text) for _ in range(len(ch.casefold()))
            ]
        origin = self._origin
        return [(origin[a], origin[b - 1] + 1) for a, b in spans]

    def offsets(self, position: int) -> tuple[int, int]:
        """Character ``[start, end)`` in the original text of processed token ``position``."""
        return self.spans([(position, position)])[0]

    def token_offsets(self) -> list[tuple[int, int]]:
        """Original-text offsets of every processed token, in position order."""
        if not isinstance(self._source, bytes):
            return self.spans((p, p) for p in range(len(self.terms)))
        lengths = list(map(len, self._source.split(b" ")))
        starts = list(accumulate(map((1).__add__, lengths), initial=0))
        pieces = compress(compress(range(len(lengths)), lengths), self._mapped)
        return [(starts[i], starts[i] + lengths[i]) for i in pieces]

    def tokens(self) -> list[Token]:
        """The processed tokens with their original-text offsets."""
        return [
            Token(term, start, end)
            for term, (start, end) in zip(self.terms, self.token_offsets(), strict=True)
        ]


def tokenize(text: str, options: MatchOptions | None = None) -> list[Token]:
    """Processed tokens of ``text`` (stopwords removed, stemmed) with offsets."""
    return PreparedText(text, options or MatchOptions()).tokens()


def normalize(text: str, options: MatchOptions | None = None) -> list[str]:
    """Processed terms of ``text``: the token list the matcher works on."""
    return PreparedText(text, options or MatchOptions()).terms
