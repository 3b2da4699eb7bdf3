"""Scoring documents against a topic's nuggets (docs/reference/algorithms.md 4.2).

``shingleScore = lam ** ((S - k) / k)`` (0 when the document lacks a term),
``nuggetScore`` = mean of its shingle scores, document score = max over the
topic's usable nuggets (ties: first nugget in input order). A nugget with
keywords counts only for documents holding every normalized keyword term.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress
from typing import Any

from .evidence import Evidence, NuggetEvidence, Rescorer, check_lam
from .options import MatcherError, MatchOptions
from .shingles import Shingle, ShingleTable, nugget_shingles, shingle_of
from .span import window
from .tokens import PreparedText, normalize


@dataclass(frozen=True)
class NuggetSpec:
    """A nugget as the matcher sees it: id, text, optional keywords and grade."""

    id: str
    text: str
    keywords: tuple[str, ...] = ()
    grade: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise MatcherError(
                f"nugget id: must be a non-empty string, got {self.id!r}"
            )
        if not isinstance(self.text, str):
            raise MatcherError(f"nugget {self.id}: text must be a string")
        keywords = self.keywords
        if isinstance(keywords, str) or not isinstance(keywords, list | tuple):
            raise MatcherError(f"nugget {self.id}: keywords must be a list of strings")
        if not all(isinstance(word, str) for word in keywords):
            raise MatcherError(f"nugget {self.id}: keywords must be a list of strings")
        # Accept a list from JSON callers but keep the dataclass hashable.
        object.__setattr__(self, "keywords", tuple(keywords))
        grade = self.grade
        if grade is not None and (
            isinstance(grade, bool) or not isinstance(grade, int)
        ):
            raise MatcherError(f"nugget {self.id}: grade must be an integer or null")


@dataclass(frozen=True)
class DocumentMatch:
    """A document's score, best nugget, highlight spans and lambda-free evidence.

    ``spans`` are the character ``[start, end)`` offsets in the original text
    of the earliest smallest window of each matched shingle of the best
    nugget, in shingle order.
    """

    score: float = 0.0
    nugget: str | None = None
    spans: tuple[tuple[int, int], ...] = ()
    evidence: Evidence = field(default_factory=Evidence)


NO_MATCH = DocumentMatch()


class _Decay(dict[int, float]):
    """S -> ``lam ** ((S - k) / k)`` for one shingle size k, filled on demand."""

    def __init__(self, lam: float, k: int) -> None:
        super().__init__()
        self.lam = lam
        self.k = k

    def __missing__(self, s: int) -> float:
        value: float = self.lam ** ((s - self.k) / self.k)
        self[s] = value
        return value


@lru_cache(maxsize=65_536)
def nugget_parts(
    text: str, keywords: tuple[str, ...], options: MatchOptions
) -> tuple[tuple[Shingle, ...], frozenset[str]]:
    """A nugget's shingles and keyword terms, kept per process: a topic's matcher is
    compiled again whenever one of its nuggets changes (the judging page), and
    normalizing the unchanged ones again was most of that cost."""
    shingles = nugget_shingles(normalize(text, options), options.k)
    terms = frozenset(t for keyword in keywords for t in normalize(keyword, options))
    return tuple(map(shingle_of, shingles)), terms


@dataclass(frozen=True)
class _Nugget:
    id: str
    shingles: tuple[int, ...]
    sizes: tuple[int, ...]
    keywords: frozenset[str]
    decay: _Decay


class TopicMatcher:
    """Scores documents against one topic's nuggets; build once per topic.

    Compiles the topic's distinct shingles and vocabulary up front, so each
    document pays for one pass over its tokens plus one linear scan per
    distinct shingle whose terms it contains.
    """

    def __init__(
        self, nuggets: Iterable[NuggetSpec], options: MatchOptions | None = None
    ) -> None:
        self.options = options or MatchOptions()
        self._pipeline = (self.options.stem, self.options.stopwords)
        self._table = ShingleTable()
        self._decays: dict[int, _Decay] = {}
        self._nuggets: list[_Nugget] = []
        unusable: list[str] = []
        seen: set[str] = set()
        for spec in nuggets:
            if not isinstance(spec, NuggetSpec):
                raise MatcherError(f"nuggets: expected NuggetSpec, got {spec!r}")
            if spec.id in seen:
                raise MatcherError(f"nugget {spec.id}: duplicate nugget id")
            seen.add(spec.id)
            compiled = self._compile(spec)
            if compiled is None:
                unusable.append(spec.id)
            else:
                self._nuggets.append(compiled)
        self.usable: tuple[str, ...] = tuple(n.id for n in self._nuggets)
        self.unusable: tuple[str, ...] = tuple(unusable)
        self._index()

    def _compile(self, spec: NuggetSpec) -> _Nugget | None:
        shingles, keywords = nugget_parts(spec.text, spec.keywords, self.options)
        if not shingles:
            return None
        size = shingles[0].size
        decay = self._decays.setdefault(size, _Decay(self.options.lam, size))
        return _Nugget(
            spec.id,
            tuple(self._table.add_shingle(shingle) for shingle in shingles),
            (size,) * len(shingles),
            keywords,
            decay,
        )

    def _index(self) -> None:
        shingles = self._table.shingles
        self._words = [frozenset(s.need) for s in shingles]
        self._needs = [s.need for s in shingles]
        use: dict[str, int] = {}
        for words in self._words:
            for term in words:
                use[term] = use.get(term, 0) + 1
        # Each shingle is looked at only when its least shared term occurs in
        # a document: fewer subset checks than triggering on every term.
        self._trigger: dict[str, list[int]] = {}
        for i, words in enumerate(self._words):
            term = min(words, key=lambda t: (use[t], t))
            self._trigger.setdefault(term, []).append(i)
        # A set, not the dict: intersecting a set with a dict walks every key of
        # the dict, a set with a set walks the smaller one (the document's terms).
        self._trigger_terms = frozenset(self._trigger)
        self._owners: list[list[int]] = [[] for _ in shingles]
        for n, nugget in enumerate(self._nuggets):
            for i in set(nugget.shingles):
                self._owners[i].append(n)
        keyword_terms = (t for nugget in self._nuggets for t in nugget.keywords)
        self.vocabulary: frozenset[str] = frozenset(use).union(keyword_terms)

    @property
    def shingle_sizes(self) -> dict[str, tuple[int, ...]]:
        """Usable nugget id -> shingle sizes, in nugget input order."""
        return {n.id: n.sizes for n in self._nuggets}

    def prepare(self, text: str) -> PreparedText:
        """Run ``text`` through this matcher's pipeline (reusable across topics)."""
        return PreparedText(text, self.options)

    def score(self, text: str) -> DocumentMatch:
        """Score one document text: score, best nugget, spans and evidence."""
        return self.score_prepared(PreparedText(text, self.options))

    def score_prepared(self, doc: PreparedText) -> DocumentMatch:
        """:meth:`score` for a text already run through the same pipeline."""
        if doc.pipeline != self._pipeline:
            raise MatcherError(
                f"document prepared with stem/stopwords {doc.pipeline}, "
                f"matcher uses {(self.options.stem, self.options.stopwords)}"
            )
        found = self._windows(doc)
        if found is None:
            return NO_MATCH
        lengths_of, starts, present = found
        length_of = lengths_of.get
        evidence = []
        best = 0.0
        best_nugget: _Nugget | None = None
        owners = self._owners
        for n in sorted({n for i in lengths_of for n in owners[i]}):
            nugget = self._nuggets[n]
            if nugget.keywords and not nugget.keywords <= present:
                continue
            lengths = tuple(map(length_of, nugget.shingles))
            evidence.append(NuggetEvidence(nugget.id, lengths, nugget.sizes))
            # All shingles of a nugget have one size, so one decay table serves;
            # None (unmatched) is filtered out as it contributes 0.
            value = sum(map(nugget.decay.__getitem__, filter(None, lengths)))
            value /= len(lengths)
            if value > best:
                best, best_nugget = value, nugget
        if best_nugget is None:
            return DocumentMatch(evidence=Evidence(tuple(evidence)))
        spans = doc.spans(
            (starts[i], starts[i] + lengths_of[i] - 1)
            for i in best_nugget.shingles
            if i in starts
        )
        return DocumentMatch(
            best, best_nugget.id, tuple(spans), Evidence(tuple(evidence))
        )

    def _windows(
        self, doc: PreparedText
    ) -> tuple[dict[int, int], dict[int, int], frozenset[str]] | None:
        """S and first position of each distinct shingle found, and topic terms present."""
        present = doc.present(self.vocabulary)
        if not present:
            return None
        words = self._words
        trigger = self._trigger
        candidates = [
            i
            for term in present.intersection(self._trigger_terms)
            for i in trigger[term]
            if words[i] <= present
        ]
        if not candidates:
            return None
        terms = doc.terms
        needed = frozenset().union(*[words[i] for i in candidates])
        positions: dict[str, list[int]] = {term: [] for term in needed}
        # Only positions of needed terms are visited in Python.
        for pos in compress(range(len(terms)), map(needed.__contains__, terms)):
            positions[terms[pos]].append(pos)
        needs = self._needs
        lengths: dict[int, int] = {}
        starts: dict[int, int] = {}
        for i in candidates:
            found = window(positions, needs[i], terms)
            if found is not None:
                lengths[i], starts[i] = found
        return (lengths, starts, present) if lengths else None

    def nugget_scores(self, text: str) -> dict[str, float]:
        """Score of every usable nugget for ``text`` (0.0 included), input order."""
        scores = dict.fromkeys(self.usable, 0.0)
        for item in self.score(text).evidence.nuggets:
            scores[item.nugget] = item.score(self.options.lam)
        return scores

    def evidence_from_json(self, data: Any) -> Evidence:
        """Rebuild stored evidence (``Evidence.to_json``) for this topic."""
        return Evidence.from_json(data, self.shingle_sizes)

    def rescorer(self, lam: float) -> Rescorer:
        """A fast re-scorer of stored JSON evidence of this topic for ``lam``."""
        return Rescorer(self.shingle_sizes, check_lam(lam))
