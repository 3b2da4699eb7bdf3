"""Reads shaped for the assessor pages: the judging page, nugget rows and previews, and
the human grades of topics.

Each function runs a fixed number of queries whatever the number of documents,
judgments or nuggets involved (the judging page is checked with a query budget).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import CharField, FilteredRelation, Q
from django.db.models.functions import Cast

from nuggets_app.access import topic_nuggets_visible
from nuggets_app.ir.aggregation import Aggregation
from nuggets_app.judging.selectors.labels import human_labels
from nuggets_app.models import (
    Assignment,
    Document,
    Judgment,
    Nugget,
    NuggetBank,
    SampleDocument,
)

# Characters an HTML parser drops or rewrites in text (CR is normalised to LF, NUL is
# removed): the page shows them as empty marker segments so offsets stay exact.
INVISIBLE = frozenset("\r\x00")
_INVISIBLE_RE = re.compile("[\r\x00]")


@dataclass
class Segment:
    """A run of document text with one set of highlights (``start`` in code points)."""

    start: int
    text: str
    nuggets: list[int] = field(default_factory=list)
    match: bool = False
    invisible: bool = False
    # Character code of an invisible character (the page cannot carry it as text).
    code: int = 0


def document_segments(
    text: str,
    nuggets: Iterable[tuple[int, int, int]],
    matches: Iterable[tuple[int, int]],
) -> list[Segment]:
    """Split ``text`` at every highlight boundary.

    ``nuggets`` are ``(id, start, end)``, ``matches`` are matcher spans ``(start,
    end)``. Every segment knows its start offset, so the page can map a DOM selection
    back to exact offsets in the canonical text.
    """
    nuggets = list(nuggets)
    matches = list(matches)
    cuts = {0, len(text)}
    for _, s, e in nuggets:
        cuts.update((s, e))
    for s, e in matches:
        cuts.update((s, e))
    for hit in _INVISIBLE_RE.finditer(text):
        cuts.update((hit.start(), hit.end()))
    bounds = sorted(c for c in cuts if 0 <= c <= len(text))
    segments = []
    for s, e in itertools.pairwise(bounds):
        piece = text[s:e]
        segments.append(
            Segment(
                start=s,
                text="" if piece in INVISIBLE else piece,
                nuggets=[n for n, ns, ne in nuggets if ns <= s and e <= ne],
                match=any(ms <= s and e <= me for ms, me in matches),
                invisible=piece in INVISIBLE,
                code=ord(piece) if piece in INVISIBLE else 0,
            )
        )
    return segments


def topic_matcher(nuggets: Iterable[Nugget]) -> Any:
    """A ``matcher.TopicMatcher`` over nuggets (ids are the primary keys as strings),
    or None when none is usable."""
    return _matcher_of(tuple((n.pk, n.text, tuple(n.keywords or ())) for n in nuggets))


def _matcher_of(specs: tuple[tuple[int, str, tuple[str, ...]], ...]) -> Any:
    from matcher import MatcherError, NuggetSpec, TopicMatcher

    try:
        matcher = TopicMatcher(NuggetSpec(str(pk), text, kw) for pk, text, kw in specs)
    except MatcherError:
        return None
    return matcher if matcher.usable else None


class _MatcherCache:
    """Compiled topic matchers of this process, keyed by the exact nuggets they hold
    (id and version), least recently used dropped first. Compiling a topic's nuggets
    costs more than scoring a document, and the same set serves every page view until
    a nugget of the topic changes."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.entries: dict[tuple, Any] = {}
        self.lock = threading.Lock()

    def get(self, rows: list[dict]) -> Any:
        key = tuple((r["id"], r["version"]) for r in rows)
        with self.lock:
            if key in self.entries:
                matcher = self.entries.pop(key)
                self.entries[key] = matcher
                return matcher
        matcher = _matcher_of(
            tuple((r["id"], r["text"], tuple(row_keywords(r))) for r in rows)
        )
        with self.lock:
            self.entries[key] = matcher
            while len(self.entries) > self.size:
                del self.entries[next(iter(self.entries))]
        return matcher


_matchers = _MatcherCache()


def _scores(matcher: Any, text: str) -> tuple[dict[int, float], list]:
    if matcher is None:
        return {}, []
    result = matcher.score(text)
    lam = matcher.options.lam
    scores = {int(item.nugget): item.score(lam) for item in result.evidence.nuggets}
    return scores, [tuple(span) for span in result.spans]


# The nugget fields the judging page shows, read as plain rows: building model
# instances for a topic's hundreds of nuggets cost more than the rest of the page.
NUGGET_FIELDS = (
    "id",
    "document_id",
    "start",
    "end",
    "span_text",
    "text",
    "keywords",
    "grade",
    "aspect",
    "version",
    "client_uuid",
    "assessor_id",
    "assessor__username",
    "bank__source_file",
)


def _provenance(row: dict) -> str:
    """Who made the nugget of ``row``: the assessor, or the file it was imported from
    (as ``Nugget.provenance``)."""
    if row["bank__source_file"]:
        return NuggetBank.provenance_of(row["bank__source_file"])
    return row["assessor__username"] or ""


def nugget_row(
    row: dict, viewer_id: int, score: float | None = None, *, full: bool = True
) -> dict:
    """A nugget row (``NUGGET_FIELDS``) as the page's JavaScript sees it; without
    ``full``, only what the topic's nugget list shows (nuggets of other documents)."""
    if not full:
        return {
            "id": row["id"],
            "document": row["document_id"],
            "text": row["text"],
            "version": row["version"],
            "assessor": _provenance(row),
            "mine": row["assessor_id"] == viewer_id,
            "score": score,
        }
    return {
        "id": row["id"],
        "document": row["document_id"],
        "start": row["start"],
        "end": row["end"],
        "span_text": row["span_text"],
        "text": row["text"],
        "keywords": row_keywords(row),
        "grade": row["grade"],
        "aspect": row["aspect"],
        "version": row["version"],
        "client_uuid": str(uuid.UUID(row["client_uuid"])),
        "assessor": _provenance(row),
        "mine": row["assessor_id"] == viewer_id,
        "score": score,
    }


def topic_nugget_rows(*, viewer: Any, topic_id: int, shared: bool = True) -> list[dict]:
    """The topic's nuggets ``viewer`` may read (``shared``: the sample shares
    nuggets between its assessors), oldest first, as rows (one query).

    The rows are the driver's values, without Django's per-row converters: a topic
    can hold a thousand nuggets, every judging request reads them all, and the
    converters (JSON-decoding every nugget's keywords, most of which are never sent)
    were half the cost of the page. ``row_keywords`` decodes one row's keywords.
    """
    # The uuid as text: the driver's UUID objects cost more than the rest of a row.
    columns = [
        Cast(name, CharField()) if name == "client_uuid" else name
        for name in NUGGET_FIELDS
    ]
    qs = (
        topic_nuggets_visible(viewer, topic_id, shared=shared)
        .order_by("created_at", "pk")
        .values_list(*columns)
    )
    sql, params = qs.query.get_compiler(qs.db).as_sql()
    with connections[qs.db].cursor() as cursor:
        cursor.execute(sql, params)
        return [dict(zip(NUGGET_FIELDS, row, strict=True)) for row in cursor]


def row_keywords(row: dict) -> list[str]:
    """The keywords of a ``topic_nugget_rows`` row (stored as JSON text)."""
    value = row["keywords"]
    return (json.loads(value) if isinstance(value, str) else value) or []


@dataclass
class JudgePage:
    """Everything the judging page shows for one queue position."""

    assignment: Assignment
    item: SampleDocument
    document: Document
    positions: list[int]
    judged_positions: set[int]
    relevance: int | None
    active_seconds: float
    # The judgment's version (0: never graded): the page sends it back with a grade.
    version: int
    # The topic's nuggets as the page's JavaScript sees them (``nugget_row``), each
    # with its matcher score in this document.
    topic_nuggets: list[dict]
    scores: dict[int, float]
    segments: list[Segment]

    @property
    def position(self) -> int:
        return self.item.order

    @property
    def index(self) -> int:
        return self.positions.index(self.item.order)

    @property
    def previous_position(self) -> int | None:
        return self.positions[self.index - 1] if self.index > 0 else None

    @property
    def next_position(self) -> int | None:
        i = self.index + 1
        return self.positions[i] if i < len(self.positions) else None

    @property
    def next_unjudged_position(self) -> int | None:
        later = self.positions[self.index + 1 :] + self.positions[: self.index]
        return next((p for p in later if p not in self.judged_positions), None)


def judge_page(
    *, assignment: Assignment, item: SampleDocument, viewer: Any
) -> JudgePage:
    """The judging page of ``item`` (a queue position of ``assignment``) as ``viewer``
    sees it; 3 queries whatever the number of nuggets."""
    document = item.document
    # The whole queue, known answers included: on the page they are documents like
    # any other. Each item shows the assessor's judgment in the item's role (a check
    # for a known answer, a label otherwise): two filtered LEFT JOINs, one query.
    roles = {
        role: FilteredRelation(
            "document__judgments",
            condition=Q(
                document__judgments__topic_id=assignment.topic_id,
                document__judgments__assessor_id=assignment.assessor_id,
                document__judgments__quality_check=role == "check",
            ),
        )
        for role in ("label", "check")
    }
    rows = sorted(
        SampleDocument.queue.filter(
            sample_id=assignment.sample_id, topic_id=assignment.topic_id
        )
        .annotate(**roles)
        .values_list(
            "order",
            "document_id",
            "known",
            *(f"{r}__{f}" for r in roles for f in ("relevance", "active_seconds")),
            "label__version",
            "check__version",
        )
    )
    queue = [(order, doc_id) for order, doc_id, *_ in rows]
    judged: dict[int, tuple[int | None, float, int]] = {}
    for _, doc_id, known, *mine in rows:
        rel, secs, version = (
            (mine[2], mine[3], mine[5]) if known else (mine[0], mine[1], mine[4])
        )
        if secs is not None:
            judged[doc_id] = (rel, secs, version)
    rows = topic_nugget_rows(
        viewer=viewer,
        topic_id=assignment.topic_id,
        shared=assignment.sample.nuggets_shared,
    )
    scores, spans = _scores(_matchers.get(rows), document.text)
    # Highlights in the text are the nuggets extracted from this very document.
    doc_id, viewer_id = document.pk, viewer.pk
    own = [(r["id"], r["start"], r["end"]) for r in rows if r["document_id"] == doc_id]
    relevance, seconds, version = judged.get(document.pk, (None, 0.0, 0))
    return JudgePage(
        assignment=assignment,
        item=item,
        document=document,
        positions=[order for order, _ in queue],
        judged_positions={o for o, d in queue if judged.get(d, (None,))[0] is not None},
        relevance=relevance,
        active_seconds=seconds,
        version=version,
        topic_nuggets=[
            nugget_row(
                r, viewer_id, scores.get(r["id"]), full=r["document_id"] == doc_id
            )
            for r in rows
        ],
        scores=scores,
        segments=document_segments(document.text, own, spans),
    )


def topic_term_spans(*, topic: Any, text: str) -> list[list[int]]:
    """``[start, end)`` of each word of ``text`` that matches a word of the topic's
    title or description as the matcher sees words: casefolded, stopwords dropped,
    stemmed ("turbines" marks "turbine"; "the" and "what" mark nothing)."""
    from matcher import normalize, tokenize

    terms = set(normalize(f"{topic.title} {topic.description}"))
    if not terms:
        return []
    return [[t.start, t.end] for t in tokenize(text) if t.term in terms]


def nugget_preview(
    *, assignment: Assignment, text: str, keywords: list[str]
) -> dict[str, int]:
    """How many of the assignment's judged sample documents a draft nugget would
    match (score >= ``settings.NUGGET_PREVIEW_THRESHOLD``), split by relevance."""
    level = assignment.topic.collection.relevance_level
    judged = dict(
        Judgment.objects.filter(
            topic_id=assignment.topic_id,
            assessor_id=assignment.assessor_id,
            relevance__isnull=False,
            quality_check=False,
            document__in=SampleDocument.objects.filter(
                sample_id=assignment.sample_id, topic_id=assignment.topic_id
            ).values("document_id"),
        ).values_list("document_id", "relevance")
    )
    counts = {
        "relevant": 0,
        "nonrelevant": 0,
        "judged_relevant": 0,
        "judged_nonrelevant": 0,
    }
    matcher = topic_matcher([Nugget(pk=1, text=text, keywords=keywords)])
    for doc_id, doc_text in Document.objects.filter(pk__in=judged).values_list(
        "pk", "text"
    ):
        kind = "relevant" if judged[doc_id] >= level else "nonrelevant"
        counts[f"judged_{kind}"] += 1
        if (
            matcher
            and matcher.score(doc_text).score >= settings.NUGGET_PREVIEW_THRESHOLD
        ):
            counts[kind] += 1
    return counts


def human_grades(
    topic_ids: Iterable[int],
    assessors: Iterable[int] | None = None,
    *,
    aggregation: Aggregation | None = None,
) -> dict[tuple[int, int], int]:
    """{(topic id, document id): grade}: the human label of every judged document
    under the collection's aggregation rule (or ``aggregation``), of ``assessors``'
    judgments only when given (:func:`nuggets_app.judging.selectors.labels.human_labels`)."""
    labels = human_labels(topic_ids, aggregation=aggregation, assessors=assessors)
    return {key: label.grade for key, label in labels.items()}


def nugget_text_twins(*, viewer: Any, nugget: Nugget) -> str:
    """A warning when another nugget of the topic the viewer can see says the same
    (same words, ignoring case and spacing), "" otherwise: two identical nuggets
    count one piece of information twice."""
    wanted = " ".join(nugget.text.split()).casefold()
    if not wanted:
        return ""
    rows = (
        topic_nuggets_visible(viewer, nugget.topic_id)
        .exclude(pk=nugget.pk)
        .order_by("pk")
        .values(*NUGGET_FIELDS)
    )
    twins = [r for r in rows if " ".join(r["text"].split()).casefold() == wanted]
    if not twins:
        return ""
    names = ", ".join(
        f"nugget {r['id']} ({'yours' if r['assessor_id'] == viewer.pk else _provenance(r)})"
        for r in twins[:3]
    )
    more = f" and {len(twins) - 3} more" if len(twins) > 3 else ""
    return f"the same text as {names}{more} in this topic: reword it, or delete one"
