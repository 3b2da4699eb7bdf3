"""Reads for the assessor-quality page: each assessor's agreement with the known
answers, with the other assessors and with the adjudicated decisions, each with a
Wilson 95% interval, and their time per document.

Agreement counts a grade as agreeing at the collection's relevance level (both
relevant or both not), beside exact agreement on the grade. With the others it is
counted over (document, other assessor) pairs, which are not independent when three
or more judged a document: the interval is then narrower than it should be.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from nuggets_app.ir.proportions import Proportion, wilson_interval
from nuggets_app.models import Adjudication, Collection, Judgment, KnownAnswer


@dataclass
class AssessorQuality:
    """One assessor of a collection: agreement (at the relevance level and exact)
    with known answers, adjudications and the others; judged documents, mean time per
    judged document; ``flag``: "" or a sentence why the assessor needs a look."""

    username: str
    judged: int
    seconds_per_doc: float
    known: Proportion
    known_exact: Proportion
    adjudicated: Proportion
    others: Proportion
    flag: str = ""

    @property
    def proportions(self) -> list[Proportion]:
        """The four agreements in the page's column order."""
        return [self.known, self.known_exact, self.adjudicated, self.others]


def assessor_quality(*, collection: Collection, level: float) -> list[AssessorQuality]:
    """Every assessor who judged in ``collection``, by username; flagged when the
    agreement with the known answers at the relevance level is below ``level``
    (a share in [0, 1]): "below" when the point estimate is, "clearly below" when the
    whole interval is. Three queries."""
    cut = collection.relevance_level
    rows = Judgment.objects.filter(
        topic__collection=collection, relevance__isnull=False
    ).values_list(
        "assessor__username",
        "topic_id",
        "document_id",
        "relevance",
        "active_seconds",
        "quality_check",
    )
    known = {
        (t, d): rel
        for t, d, rel in KnownAnswer.objects.filter(
            topic__collection=collection
        ).values_list("topic_id", "document_id", "relevance")
    }
    decided = {
        (t, d): rel
        for t, d, rel in Adjudication.objects.filter(
            topic__collection=collection
        ).values_list("topic_id", "document_id", "relevance")
    }
    counts: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    seconds: dict[str, float] = defaultdict(float)
    judged: dict[str, int] = defaultdict(int)
    by_doc: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    for name, t, d, rel, secs, check in rows:
        if rel is None:
            continue
        judged[name] += 1
        seconds[name] += secs
        if check:
            if (t, d) in known:
                _count(counts[name]["known"], rel >= cut, known[(t, d)] >= cut)
                _count(counts[name]["known_exact"], rel, known[(t, d)])
            continue
        by_doc[(t, d)][name] = rel
        if (t, d) in decided:
            _count(counts[name]["adjudicated"], rel >= cut, decided[(t, d)] >= cut)
    for grades in by_doc.values():
        for name, rel in grades.items():
            for other, theirs in grades.items():
                if other != name:
                    _count(counts[name]["others"], rel >= cut, theirs >= cut)
    out = []
    for name in sorted(judged):
        c = counts[name]
        row = AssessorQuality(
            username=name,
            judged=judged[name],
            seconds_per_doc=seconds[name] / judged[name],
            known=wilson_interval(*c["known"]),
            known_exact=wilson_interval(*c["known_exact"]),
            adjudicated=wilson_interval(*c["adjudicated"]),
            others=wilson_interval(*c["others"]),
        )
        if row.known.n and row.known.high < level:
            row.flag = (
                f"clearly below {level:.0%}: even the interval's top, "
                f"{row.known.high:.0%}, is"
            )
        elif row.known.n and row.known.p < level:
            row.flag = f"below {level:.0%} (the interval reaches {row.known.high:.0%})"
        out.append(row)
    return out


def _count(tally: list[int], a: object, b: object) -> None:
    tally[0] += a == b
    tally[1] += 1


def adjudicated_agreement() -> list[tuple[Collection, list[AssessorQuality]]]:
    """Per collection with adjudicated decisions, the assessors who judged one of
    those documents, with their agreement with the decisions."""
    collections = Collection.objects.filter(
        pk__in=Adjudication.objects.values("topic__collection_id")
    ).order_by("name")
    out = []
    for collection in collections:
        rows = assessor_quality(collection=collection, level=0.0)
        out.append((collection, [r for r in rows if r.adjudicated.n]))
    return out
