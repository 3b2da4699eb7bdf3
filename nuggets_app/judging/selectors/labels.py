"""The human label of a (topic, document) several assessors judged, under a stated rule.

One function, :func:`human_labels`, computes the human labels every reader uses: the
human, merged and probabilistic exports, the relevance model's fit and the estimates
(through :func:`nuggets_app.judging.selectors.human_grades`). The rule is the collection's
(``Collection.aggregation``, default ``highest``) unless a caller names another (an
export's ``--aggregate``; the collection's rule is set by
:func:`nuggets_app.judging.services.aggregation.aggregation_set`); the rules themselves
are in :mod:`nuggets_app.ir.aggregation`.

Judgments made on known answers interleaved in a queue (``Judgment.quality_check``)
check the assessor and are never labels: the grade is known already, and counting it
would put those documents into the estimates beside the drawn sample.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from nuggets_app.ir.aggregation import Aggregation, grade_combine
from nuggets_app.models import Adjudication, Collection, Judgment, KnownAnswer, Topic


@dataclass(frozen=True)
class HumanLabel:
    """One (topic, document)'s human label: the ``grade``, the rule that decided it
    (``how``), who gave that grade (the adjudicator for ``adjudicated``) and every
    assessor's own grade."""

    grade: int
    how: str
    assessors: tuple[str, ...]
    grades: dict[str, int]


def aggregation_of(collection: Collection) -> Aggregation:
    """The collection's rule (``highest`` when none was set)."""
    return Aggregation.from_dict(collection.aggregation)


def human_labels(
    topic_ids: Iterable[int],
    *,
    aggregation: Aggregation | None = None,
    assessors: Iterable[int] | None = None,
) -> dict[tuple[int, int], HumanLabel]:
    """{(topic id, document id): HumanLabel} of every judged (or adjudicated)
    document of the topics, under ``aggregation`` (each topic's collection's rule
    when None). ``assessors``: only these users' judgments count, and no
    adjudication (a subset of the assessors is asked for, not the resolved answer).
    Three queries."""
    topic_ids = list(topic_ids)
    rules = _rules(topic_ids, aggregation)
    judgments = Judgment.objects.filter(
        topic_id__in=topic_ids, relevance__isnull=False, quality_check=False
    )
    if assessors is not None:
        judgments = judgments.filter(assessor_id__in=list(assessors))
    grades: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for topic_id, doc_id, grade, username in judgments.order_by(
        "topic_id", "document_id", "assessor__username"
    ).values_list("topic_id", "document_id", "relevance", "assessor__username"):
        if grade is not None:
            grades[(topic_id, doc_id)][username] = grade
    decided: dict[tuple[int, int], tuple[int, str]] = {}
    wanted = [t for t, rule in rules.items() if rule.rule == "adjudicated"]
    if wanted and assessors is None:
        for topic_id, doc_id, grade, username in Adjudication.objects.filter(
            topic_id__in=wanted
        ).values_list("topic_id", "document_id", "relevance", "adjudicator__username"):
            decided[(topic_id, doc_id)] = (grade, username)
    out: dict[tuple[int, int], HumanLabel] = {}
    for key in sorted(set(grades) | set(decided)):
        given = grades.get(key, {})
        adjudicated = decided.get(key)
        grade, how = grade_combine(
            given, rules[key[0]], adjudicated[0] if adjudicated else None
        )
        if how == "adjudicated":
            who: tuple[str, ...] = (adjudicated[1],) if adjudicated else ()
        else:
            who = tuple(name for name, g in given.items() if g == grade)
        out[key] = HumanLabel(grade=grade, how=how, assessors=who, grades=dict(given))
    return out


def known_answer_checks(
    topic_ids: Iterable[int],
) -> dict[tuple[int, int], list[dict[str, Any]]]:
    """{(topic id, document id): [{"assessor", "rel", "known"}]}: the grades people
    gave the documents of the topics as checks of a known answer (``known``: its
    known grade, None once it is no longer one), by username. Never labels, but an
    export's provenance says a person saw the document and what they said. Two
    queries."""
    topic_ids = list(topic_ids)
    known = {
        (t, d): rel
        for t, d, rel in KnownAnswer.objects.filter(topic_id__in=topic_ids).values_list(
            "topic_id", "document_id", "relevance"
        )
    }
    out: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for topic_id, doc_id, grade, username in (
        Judgment.objects.filter(
            topic_id__in=topic_ids, relevance__isnull=False, quality_check=True
        )
        .order_by("topic_id", "document_id", "assessor__username")
        .values_list("topic_id", "document_id", "relevance", "assessor__username")
    ):
        key = (topic_id, doc_id)
        out[key].append({"assessor": username, "rel": grade, "known": known.get(key)})
    return dict(out)


def _rules(
    topic_ids: list[int], aggregation: Aggregation | None
) -> dict[int, Aggregation]:
    if aggregation is not None:
        return dict.fromkeys(topic_ids, aggregation)
    stored: dict[int, Any] = dict(
        Topic.objects.filter(pk__in=topic_ids).values_list(
            "pk", "collection__aggregation"
        )
    )
    parsed: dict[str, Aggregation] = {}
    out = {}
    for topic_id, data in stored.items():
        key = repr(sorted((data or {}).items()))
        if key not in parsed:
            parsed[key] = Aggregation.from_dict(data)
        out[topic_id] = parsed[key]
    return out
