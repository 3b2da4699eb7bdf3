"""The people in a test-collection release: their judgments with the role of each,
the adjudicated decisions, the agreement table, and the names they go by.

From ``judgments.tsv`` (minus the known-answer checks) and ``adjudications.tsv`` a
reader rebuilds ``qrels.human.txt`` line for line with the manifest's
``human_qrels_rule`` (:func:`nuggets_app.ir.aggregation.grade_combine`), as
``docs/reference/formats.md`` describes.

In a pseudonymous release every name a person goes by, in any file, is a pseudonym
``assessor-N`` (:func:`assessor_names`): judges, nugget authors, adjudicators, the
primary assessor of the aggregation rule, and the names in the qrels' provenance
sidecars (:func:`provenance_named`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model

from nuggets_app.errors import DomainError
from nuggets_app.importers.fields import qid_key
from nuggets_app.ir.aggregation import Aggregation
from nuggets_app.judging.selectors.agreement import PairAgreement, topic_agreement
from nuggets_app.lib.csvout import csv_writer
from nuggets_app.models import (
    Adjudication,
    Collection,
    Judgment,
    Nugget,
    Sample,
    SampleDocument,
)

JUDGMENT_COLUMNS = "qid docno assessor relevance active_seconds created changed role"
ADJUDICATION_COLUMNS = "qid docno adjudicator relevance created changed"
# Why each judgment was made, first match wins (formats.md, "judgments.tsv").
ROLES = ("check", "sample", "top-up", "verification", "other")

Naming = Callable[[str], str]


class NamingError(DomainError):
    """A name the release would write has no pseudonym; the message names it."""


def assessor_names(
    collection: Collection, *, real_names: bool, aggregation: Aggregation
) -> Naming:
    """Names of the collection's people as the release writes them: pseudonyms
    ``assessor-N`` numbered in the order of their user ids (judges, nugget authors
    and adjudicators, then the aggregation rule's primary assessor, then names a
    bank gave its nuggets after them, sorted), or their user names with
    ``real_names``. A name outside that list raises ``NamingError`` rather than be
    written as it is."""
    if real_names:
        return lambda name: name
    users = get_user_model().objects
    in_collection = {"topic__collection": collection}
    ids = (
        set(
            Judgment.objects.filter(**in_collection).values_list(
                "assessor_id", flat=True
            )
        )
        | set(
            Nugget.objects.filter(**in_collection).values_list("assessor_id", flat=True)
        )
        | set(
            Adjudication.objects.filter(**in_collection).values_list(
                "adjudicator_id", flat=True
            )
        )
    )
    names = [u.get_username() for u in users.filter(pk__in=ids).order_by("pk")]
    extra = {aggregation.primary} if aggregation.primary else set()
    extra |= set(
        Nugget.objects.filter(**in_collection)
        .exclude(source_assessor="")
        .values_list("source_assessor", flat=True)
    )
    names += [n for n in sorted(extra) if n not in names]
    table = {name: f"assessor-{n}" for n, name in enumerate(names, start=1)}

    def name_of(name: str) -> str:
        if name not in table:
            raise NamingError(f"{name!r} has no pseudonym in this release")
        return table[name]

    return name_of


def aggregation_named(aggregation: Aggregation, name: Naming) -> Aggregation:
    """The rule with its primary assessor under the release's name."""
    primary = name(aggregation.primary) if aggregation.primary else None
    return Aggregation(
        rule=aggregation.rule,
        primary=primary,
        ties=aggregation.ties,
        fallback=aggregation.fallback,
    )


def provenance_named(provenance: dict[str, Any] | None, name: Naming) -> Any:
    """A qrels sidecar with every person's name under the release's name: the
    assessors of each line and the aggregation rule's primary (and its text)."""
    if provenance is None:
        return None
    out = dict(provenance)
    if out.get("aggregation"):
        rule = Aggregation.from_dict(out["aggregation"])
        out["aggregation"] = aggregation_named(rule, name).as_dict()
    if isinstance(out.get("lines"), list):
        out["lines"] = [_line_named(line, name) for line in out["lines"]]
    return out


def _line_named(line: Any, name: Naming) -> Any:
    """A sidecar line with its assessors (and the person's label beside an
    inferred line) under the release's names."""
    if not isinstance(line, dict):
        return line
    out = dict(line)
    if "assessors" in out:
        out["assessors"] = [name(n) for n in out["assessors"]]
    if isinstance(out.get("person"), dict):
        out["person"] = _line_named(out["person"], name)
    return out


def judgment_roles(
    collection: Collection, sample: Sample
) -> dict[tuple[int, int], str]:
    """``{(topic id, document id): role}`` of the documents drawn in the collection's
    samples: ``sample`` (the release's sample, whose prels it holds), ``top-up``,
    ``verification``; a document drawn in another sample of the collection is
    ``other`` as one judged outside every sample (absent here)."""
    rank = {"sample": 0, "top-up": 1, "verification": 2}
    roles: dict[tuple[int, int], str] = {}
    rows = SampleDocument.objects.filter(
        sample__pool__collection=collection
    ).values_list("topic_id", "document_id", "sample_id", "sample__method")
    for topic_id, doc_id, sample_id, method in rows.iterator():
        if sample_id == sample.pk:
            role = "sample"
        elif method == Sample.Method.TOP_UP:
            role = "top-up"
        elif method == Sample.Method.VERIFICATION:
            role = "verification"
        else:
            continue
        key = (topic_id, doc_id)
        if key not in roles or rank[role] < rank[roles[key]]:
            roles[key] = role
    return roles


def judgments_tsv(collection: Collection, sample: Sample, name: Naming) -> str:
    """Every graded judgment of the collection with its role (``ROLES``): a
    known-answer ``check`` is never a label; every other role counts for the human
    qrels."""
    roles = judgment_roles(collection, sample)
    rows = Judgment.objects.filter(
        topic__collection=collection, relevance__isnull=False
    ).values_list(
        "topic_id",
        "document_id",
        "quality_check",
        "topic__qid",
        "document__docno",
        "assessor__username",
        "relevance",
        "active_seconds",
        "created_at",
        "updated_at",
    )
    lines = []
    for (
        topic_id,
        doc_id,
        check,
        qid,
        docno,
        who,
        rel,
        seconds,
        created,
        changed,
    ) in rows:
        role = "check" if check else roles.get((topic_id, doc_id), "other")
        lines.append(
            (
                (qid_key(qid), docno, name(who)),
                f"{qid}\t{docno}\t{name(who)}\t{rel}\t{seconds!r}\t"
                f"{created.isoformat()}\t{changed.isoformat()}\t{role}",
            )
        )
    return _tsv(JUDGMENT_COLUMNS, (text for _, text in sorted(lines)))


def adjudications_tsv(collection: Collection, name: Naming) -> str:
    """Every adjudicated decision of the collection (the ``adjudicated`` rule's
    grade where one exists)."""
    rows = Adjudication.objects.filter(topic__collection=collection).values_list(
        "topic__qid",
        "document__docno",
        "adjudicator__username",
        "relevance",
        "created_at",
        "updated_at",
    )
    ordered = sorted(rows, key=lambda r: (qid_key(r[0]), r[1]))
    return _tsv(
        ADJUDICATION_COLUMNS,
        (
            f"{qid}\t{docno}\t{name(who)}\t{rel}\t{created.isoformat()}\t"
            f"{changed.isoformat()}"
            for qid, docno, who, rel, created, changed in ordered
        ),
    )


def _tsv(columns: str, lines: Iterable[str]) -> str:
    return "".join(f"{line}\n" for line in [columns.replace(" ", "\t"), *lines])


def agreement_csv(collection: Collection, name: Naming) -> str:
    """The agreement table of the collection's assessors, under their names here."""

    class Buffer(list):
        def write(self, text: str) -> None:
            self.append(text)

    out = Buffer()
    writer = csv_writer(out)
    writer.writerow(PairAgreement.CSV_HEADER)
    for pair in topic_agreement():
        if pair.collection == collection.name:
            pair.assessor_a, pair.assessor_b = (
                name(pair.assessor_a),
                name(pair.assessor_b),
            )
            writer.writerow(pair.csv_row())
    return "".join(out)


def human_qrels_rule(aggregation: Aggregation, name: Naming) -> Mapping[str, Any]:
    """The manifest's ``human_qrels_rule``: its name, its text and the whole rule
    (``spec``, as ``Aggregation.from_dict`` reads it), under the release's names."""
    named = aggregation_named(aggregation, name)
    spec = {k: v for k, v in named.as_dict().items() if k != "text"}
    return {"name": named.rule, "text": named.describe(), "spec": spec}
