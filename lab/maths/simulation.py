"""The simulated assessor's nugget extraction, and the maths of the simulation report.

Pure, deterministic and Django-free.

Nugget extraction (:func:`nuggets_extract`), for each judged relevant document of a
topic, with ``R`` judged relevant documents in the topic's sample:

1. Split the document's text into sentences (a run of text ended by ``.``, ``!``,
   ``?`` or ``;`` followed by white space, or by a line break).
2. Score each sentence: ``topic overlap + relevant_weight * relevant overlap``, where
   ``topic overlap`` = number of distinct topic terms in the sentence and
   ``relevant overlap`` = ``Σ c_t / (R - 1)`` over its distinct non-topic terms, ``c_t``
   being the number of *other* relevant documents containing term ``t`` (0 if R = 1).
   Terms are the matcher's (stopwords out, Porter stems), so a nugget is scored in the
   same vocabulary the matcher will match it in.
3. Sentences with more than ``max_terms`` terms are trimmed to the window of
   ``max_terms`` consecutive terms with the best score (earliest on ties); the nugget's
   offsets run from its first term's first character to its last term's last one.
4. Keep the ``nuggets_per_doc`` best windows with a positive score (earliest on ties).
5. A nugget is *generic* when it has fewer than ``min_terms`` distinct terms or no
   topic term. It gets as keywords the ``keywords`` rarest topic terms (smallest
   document frequency) found in its sentence, else in its document, each written as
   the word that occurs in the text.

The nugget text is the span as highlighted (a simulated assessor does not rewrite).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from nuggets_app.errors import DomainError
from nuggets_app.learning.rule_spec import RuleError, rule_spec_parse


class SimulationError(DomainError):
    """The simulation cannot run as asked; the message says why."""


class TokenLike(Protocol):
    @property
    def term(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


Tokenizer = Callable[[str], Sequence[TokenLike]]

SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+|\n+")


@dataclass(frozen=True)
class ExtractionOptions:
    """Knobs of the simulated assessor (defaults in brackets in the module docs)."""

    nuggets_per_doc: int = 2
    max_terms: int = 12
    min_terms: int = 3
    keywords: int = 2
    relevant_weight: float = 1.0

    def __post_init__(self) -> None:
        for name in ("nuggets_per_doc", "max_terms", "min_terms", "keywords"):
            if getattr(self, name) < 0:
                raise SimulationError(
                    f"{name}: must be >= 0, got {getattr(self, name)}"
                )
        if self.max_terms < 1:
            raise SimulationError(f"max_terms: must be >= 1, got {self.max_terms}")


@dataclass(frozen=True)
class ExtractedNugget:
    """One simulated nugget: ``[start, end)`` offsets into its document's text."""

    docno: str
    start: int
    end: int
    text: str
    keywords: tuple[str, ...]
    score: float


def default_tokenizer() -> Tokenizer:
    """The matcher's text pipeline, so nuggets are chosen in the matcher's terms."""
    from matcher.tokens import tokenize

    return tokenize


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence, surrounding white space excluded."""
    spans = []
    position = 0
    for match in [*SENTENCE_END_RE.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = text[position:end]
        stripped = chunk.strip()
        if stripped:
            start = position + chunk.index(stripped)
            spans.append((start, start + len(stripped)))
        position = match.end() if match else len(text)
    return spans


def _window_score(
    terms: Sequence[str],
    topic: frozenset[str],
    support: Mapping[str, float],
    weight: float,
) -> float:
    distinct = set(terms)
    # Added in sorted order: a sum in set order would depend on the hash seed.
    return len(distinct & topic) + weight * sum(
        support.get(t, 0.0) for t in sorted(distinct - topic)
    )


def _best_window(
    tokens: Sequence[TokenLike],
    topic: frozenset[str],
    support: Mapping[str, float],
    options: ExtractionOptions,
) -> tuple[float, int, int]:
    """(score, first token, last token + 1) of the best window of one sentence."""
    size = min(options.max_terms, len(tokens))
    best = (-1.0, 0, size)
    for first in range(len(tokens) - size + 1):
        terms = [t.term for t in tokens[first : first + size]]
        score = _window_score(terms, topic, support, options.relevant_weight)
        if score > best[0]:
            best = (score, first, first + size)
    return best


def _keywords(
    candidates: Iterable[Sequence[TokenLike]],
    text: str,
    topic: frozenset[str],
    doc_freq: Mapping[str, int],
    limit: int,
) -> tuple[str, ...]:
    """The ``limit`` rarest topic terms of the first candidate token list holding any."""
    for tokens in candidates:
        words: dict[str, str] = {}
        for token in tokens:
            if token.term in topic and token.term not in words:
                words[token.term] = text[token.start : token.end]
        if words:
            rarest = sorted(words, key=lambda term: (doc_freq.get(term, 0), term))
            return tuple(words[term] for term in rarest[:limit])
    return ()


def _document_nuggets(
    docno: str,
    text: str,
    tokens: Sequence[TokenLike],
    topic: frozenset[str],
    support: Mapping[str, float],
    doc_freq: Mapping[str, int],
    options: ExtractionOptions,
) -> list[ExtractedNugget]:
    candidates = []
    for order, (start, end) in enumerate(sentence_spans(text)):
        sentence = [t for t in tokens if t.start >= start and t.end <= end]
        if not sentence:
            continue
        score, first, last = _best_window(sentence, topic, support, options)
        if score > 0:
            candidates.append((-score, order, sentence, sentence[first:last]))
    candidates.sort(key=lambda c: (c[0], c[1]))
    nuggets = []
    for negative_score, _, sentence, window in candidates[: options.nuggets_per_doc]:
        start, end = window[0].start, window[-1].end
        distinct = {t.term for t in window}
        keywords: tuple[str, ...] = ()
        if options.keywords and (
            len(distinct) < options.min_terms or not distinct & topic
        ):
            keywords = _keywords(
                (sentence, tokens), text, topic, doc_freq, options.keywords
            )
        nuggets.append(
            ExtractedNugget(
                docno, start, end, text[start:end], keywords, -negative_score
            )
        )
    return nuggets


def nuggets_extract(
    *,
    topic_text: str,
    relevant_docs: Mapping[str, str],
    doc_freq: Mapping[str, int] | None = None,
    options: ExtractionOptions | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[ExtractedNugget]:
    """Nuggets of one topic from its judged relevant documents (``docno → text``).

    ``doc_freq`` (term → document frequency in the collection) ranks keyword rarity;
    terms missing from it count as rarest. Output is ordered by docno, then by score.
    """
    options = options or ExtractionOptions()
    tokenize = tokenizer or default_tokenizer()
    topic = frozenset(t.term for t in tokenize(topic_text))
    tokens = {
        docno: list(tokenize(relevant_docs[docno])) for docno in sorted(relevant_docs)
    }
    presence = {docno: {t.term for t in toks} for docno, toks in tokens.items()}
    counts = Counter(term for terms in presence.values() for term in terms)
    others = max(len(tokens) - 1, 1)
    nuggets: list[ExtractedNugget] = []
    for docno, doc_tokens in tokens.items():
        # Other documents only: a term's own document must not vouch for it.
        support = {
            t: (counts[t] - 1) / others for t in presence[docno] if counts[t] > 1
        }
        nuggets.extend(
            _document_nuggets(
                docno,
                relevant_docs[docno],
                doc_tokens,
                topic,
                support,
                doc_freq or {},
                options,
            )
        )
    return nuggets


# Report maths --------------------------------------------------------------------


@dataclass(frozen=True)
class SetQuality:
    """Precision and recall of a predicted relevant set against the truth."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float:
        predicted = self.true_positives + self.false_positives
        return self.true_positives / predicted if predicted else float("nan")

    @property
    def recall(self) -> float:
        actual = self.true_positives + self.false_negatives
        return self.true_positives / actual if actual else float("nan")

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else 0.0


def set_quality(
    predicted: Mapping[str, Iterable[str]],
    truth: Mapping[str, Iterable[str]],
    universe: Mapping[str, Iterable[str]],
) -> SetQuality:
    """Counts of predicted vs true relevant docnos, per topic within ``universe``."""
    tp = fp = fn = 0
    for qid, docnos in universe.items():
        scope = set(docnos)
        guess = set(predicted.get(qid, ())) & scope
        actual = set(truth.get(qid, ())) & scope
        tp += len(guess & actual)
        fp += len(guess - actual)
        fn += len(actual - guess)
    return SetQuality(tp, fp, fn)


def found_curve(
    rankings: Mapping[str, Sequence[str]], relevant: Mapping[str, Iterable[str]]
) -> list[tuple[int, int]]:
    """``(non-relevant found, relevant found)`` summed over topics at each rank cutoff.

    Point ``i`` counts the top ``i + 1`` documents of every topic's ranking; the curve
    starts at ``(0, 0)``.
    """
    depth = max((len(r) for r in rankings.values()), default=0)
    rel_at = [0] * (depth + 1)
    nonrel_at = [0] * (depth + 1)
    for qid, ranking in rankings.items():
        wanted = set(relevant.get(qid, ()))
        for position, docno in enumerate(ranking, start=1):
            if docno in wanted:
                rel_at[position] += 1
            else:
                nonrel_at[position] += 1
    curve, rel, nonrel = [(0, 0)], 0, 0
    for position in range(1, depth + 1):
        rel += rel_at[position]
        nonrel += nonrel_at[position]
        curve.append((nonrel, rel))
    return curve


SIMULATION_RULES = "threshold:X, top:N or fit:fB[:per-topic]"


def rule_parse(rule: str) -> tuple[str, float]:
    """The simulation's rules, read by the product's one rule grammar
    (:func:`nuggets_app.learning.rule_spec.rule_spec_parse`, so a value is checked
    the same way): ``threshold:X`` / ``paper:X`` (score >= X) as ``("threshold",
    X)``, ``top:N`` (N best per topic) as ``("top", N)``, ``fit:fB`` /
    ``fit:fB:per-topic`` (the threshold with the best F-beta on the held-out judged
    documents) as ``("fit", beta)`` / ``("fit-per-topic", beta)``. The model's rules
    (``p:X``, ``expected-f1``) are the product's, not the simulation's."""
    try:
        spec = rule_spec_parse(rule)
    except RuleError as exc:
        raise SimulationError(
            f"rule {rule!r}: {exc} (the simulation takes {SIMULATION_RULES})"
        ) from None
    if spec.kind == "threshold" and spec.threshold is not None:
        return "threshold", spec.threshold
    if spec.kind == "top_n" and spec.n is not None:
        return "top", spec.n
    if spec.kind == "fit" and spec.beta is not None:
        return ("fit" if spec.scope == "global" else "fit-per-topic"), spec.beta
    raise SimulationError(f"rule {rule!r}: the simulation takes {SIMULATION_RULES}")
