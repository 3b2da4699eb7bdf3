"""Generated answers evaluated against a collection's nuggets (``evaluate_answers``
and the answers page): per answer, each nugget of its topic contained or not with
the matched spans (:mod:`nuggets_app.ir.answers`), and with the semantic extra the
answer's sentence nearest to the nugget; per answer nugget recall (all and
vital-weighted); per system the means over topics with their 95% intervals.

The nuggets are every nugget of the topic (assessors' and imported banks'), or one
bank's. Topics evaluated: those with nuggets that some answer of the file answers;
a system that did not answer one of them gets 0 there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matcher import MatchOptions, NuggetSpec
from nuggets_app.errors import DomainError, matcher_input
from nuggets_app.importers.answers import AnswerRecord, parse_answers
from nuggets_app.importers.errors import (
    ErrorSink,
    report,
    unknown_in_collection,
)
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services import embeddings
from nuggets_app.ir.answers import (
    DEFAULT_THRESHOLD,
    AnswerMatcher,
    Interval,
    NuggetFound,
    answer_recall,
    mean_interval,
)
from nuggets_app.models import Collection, Nugget

INTERVAL_NOTE = (
    "Each system's figure is its mean over the topics evaluated (0 where it gave no "
    "answer), with a 95% Wilson interval over those topics as clusters (Korn and "
    "Graubard's effective size, never smaller than the number of topics, so it stays "
    "in [0, 1] and is wide on few topics): it covers which topics were chosen, not "
    "the matcher's mistakes (see the measured agreement with people)."
)


class AnswersError(DomainError):
    """The answers cannot be evaluated as asked; the message says why."""


@dataclass
class AnswerResult:
    """One answer against its topic's nuggets."""

    answer: AnswerRecord
    nuggets: list[NuggetFound]
    texts: dict[str, str]
    recall: float
    weighted: float
    # nugget id -> {"similarity", "span"}: the nearest sentence (semantic extra).
    semantic: dict[str, dict[str, Any]] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """Per nugget, for pages and the details file."""
        return [
            {
                "nugget": f.nugget,
                "text": self.texts[f.nugget],
                "score": f.score,
                "contained": f.contained,
                "weight": f.weight,
                "spans": [list(s) for s in f.spans],
                "matched": [self.answer.text[a:b] for a, b in f.spans],
                "semantic": self.semantic.get(f.nugget),
            }
            for f in self.nuggets
        ]


@dataclass(frozen=True)
class SystemResult:
    """A system's means over topics."""

    run_id: str
    recall: Interval
    weighted: Interval
    answered: int


@dataclass
class AnswersEvaluation:
    collection: str
    threshold: float
    topics: list[str]
    answers: list[AnswerResult]
    systems: list[SystemResult]
    # qid -> lines of answers to topics without nuggets (not evaluated).
    no_nuggets: dict[str, list[int]]
    semantic: bool

    def table(self) -> list[str]:
        """Tab-separated lines: the header, then one per system (best first)."""
        lines = [
            "run_id\ttopics\tanswered\trecall\trecall_ci_low\trecall_ci_high\t"
            "weighted_recall\tweighted_ci_low\tweighted_ci_high"
        ]
        for s in self.systems:
            lines.append(
                f"{s.run_id}\t{s.recall.n}\t{s.answered}\t{s.recall.mean!r}\t"
                f"{s.recall.low!r}\t{s.recall.high!r}\t{s.weighted.mean!r}\t"
                f"{s.weighted.low!r}\t{s.weighted.high!r}"
            )
        return lines


def _specs(collection: Collection, bank: str | None) -> dict[str, list[Nugget]]:
    nuggets = Nugget.objects.filter(topic__collection=collection)
    if bank is not None:
        if not collection.nugget_banks.filter(name=bank).exists():
            raise AnswersError(f"no nugget bank {bank!r} in {collection.name}")
        nuggets = nuggets.filter(bank__name=bank)
    by_qid: dict[str, list[Nugget]] = {}
    for nugget in nuggets.select_related("topic").order_by("topic_id", "pk"):
        by_qid.setdefault(nugget.topic.qid, []).append(nugget)
    return by_qid


def _semantic(text: str, nuggets: Sequence[Nugget]) -> dict[str, dict[str, Any]]:
    """Per nugget, the answer's window nearest to it (the semantic extra)."""
    from nuggets_app.learning.semantic import nearest_windows, text_windows

    windows = text_windows(text)
    if not windows:
        return {}
    vectors = embeddings.text_vectors([text[w.start : w.end] for w in windows])
    nugget_vectors = embeddings.text_vectors([n.text for n in nuggets])
    best, similarity = nearest_windows(vectors, nugget_vectors)
    return {
        str(n.pk): {
            "similarity": similarity[i],
            "span": [windows[best[i]].start, windows[best[i]].end],
        }
        for i, n in enumerate(nuggets)
        if best[i] >= 0
    }


def answers_evaluate(
    *,
    collection: Collection,
    path: str | Path,
    bank: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_errors: int = 1,
) -> AnswersEvaluation:
    """Evaluate the answers of ``path`` against the nuggets of ``collection`` (of
    the bank named ``bank`` only, when given), with the job defaults of the matcher
    (k 3, λ 0.5, Porter stemming, default stopwords). Raises ``ImportFormatError``
    naming file and line for a bad answer or an unknown topic, ``AnswersError``
    when nothing can be evaluated."""
    if not 0 < threshold <= 1:
        raise AnswersError(f"the threshold is in (0, 1], got {threshold}")
    sink = ErrorSink(max_errors)
    records = list(parse_answers(path, sink=sink))
    qids = set(collection.topics.values_list("qid", flat=True))
    for record in records:
        if record.qid not in qids:
            report(
                sink,
                unknown_in_collection(
                    path, record.line, "topic", record.qid, collection.name
                ),
            )
    sink.check()
    nuggets = _specs(collection, bank)
    semantic = embeddings.semantic_on()
    options = MatchOptions()
    with matcher_input(AnswersError):  # a stored nugget the matcher refuses
        matchers = {
            qid: AnswerMatcher(
                [
                    NuggetSpec(str(n.pk), n.text, tuple(n.keywords), n.grade)
                    for n in rows
                ],
                options,
                threshold,
            )
            for qid, rows in nuggets.items()
        }
    answers: list[AnswerResult] = []
    no_nuggets: dict[str, list[int]] = {}
    for record in records:
        if record.qid not in matchers:
            no_nuggets.setdefault(record.qid, []).append(record.line)
            continue
        found = matchers[record.qid].score(record.text)
        recall, weighted = answer_recall(found)
        answers.append(
            AnswerResult(
                answer=record,
                nuggets=found,
                texts={str(n.pk): n.text for n in nuggets[record.qid]},
                recall=recall,
                weighted=weighted,
                semantic=_semantic(record.text, nuggets[record.qid])
                if semantic
                else {},
            )
        )
    if not answers:
        raise AnswersError(
            f"no answer is to a topic with nuggets in {collection.name}"
            + (f" (bank {bank!r})" if bank else "")
        )
    topics = sorted({a.answer.qid for a in answers}, key=qid_key)
    return AnswersEvaluation(
        collection=collection.name,
        threshold=threshold,
        topics=topics,
        answers=answers,
        systems=_systems(answers, topics),
        no_nuggets=no_nuggets,
        semantic=semantic,
    )


def _systems(answers: list[AnswerResult], topics: list[str]) -> list[SystemResult]:
    by_run: dict[str, dict[str, AnswerResult]] = {}
    for result in answers:
        by_run.setdefault(result.answer.run_id, {})[result.answer.qid] = result
    systems = []
    for run_id, got in by_run.items():
        recall = [got[q].recall if q in got else 0.0 for q in topics]
        weighted = [got[q].weighted if q in got else 0.0 for q in topics]
        systems.append(
            SystemResult(
                run_id=run_id,
                recall=mean_interval(recall),
                weighted=mean_interval(weighted),
                answered=len(got),
            )
        )
    return sorted(systems, key=lambda s: (-s.recall.mean, s.run_id))
