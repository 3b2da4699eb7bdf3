"""The simulated assessor's nuggets: cut from the judged relevant documents
(:mod:`lab.maths.simulation`), or taken from people's nugget bank."""

from __future__ import annotations

import uuid

from lab.maths.simulation import SimulationError, nuggets_extract
from lab.services.simulation_config import (
    SimulationConfig,
)
from matcher import MatchOptions, normalize
from nuggets_app.models import Collection, Document, Nugget, NuggetBank, Topic

Labels = dict[str, dict[str, int]]


def collection_doc_freq(
    collection: Collection, options: MatchOptions
) -> dict[str, int]:
    """Document frequency of every matcher term in the collection (keyword rarity)."""
    doc_freq: dict[str, int] = {}
    texts = Document.objects.filter(collection=collection).values_list(
        "text", flat=True
    )
    for text in texts.iterator(chunk_size=2000):
        for term in set(normalize(text, options)):
            doc_freq[term] = doc_freq.get(term, 0) + 1
    return doc_freq


def nuggets_extract_simulated(
    collection: Collection,
    human: Labels,
    assessor,
    config: SimulationConfig,
) -> tuple[dict[str, int], int]:
    """Nugget rows from the judged relevant documents; (nuggets per qid, with keywords)."""
    options = MatchOptions(k=config.k, lam=config.lam)
    doc_freq = collection_doc_freq(collection, options)
    topics = {t.qid: t for t in Topic.objects.filter(collection=collection)}
    wanted = {
        docno for labels in human.values() for docno, g in labels.items() if g > 0
    }
    docs = {
        d.docno: d
        for d in Document.objects.filter(collection=collection, docno__in=wanted)
    }
    rows: list[Nugget] = []
    counts: dict[str, int] = {}
    with_keywords = 0
    for qid, labels in sorted(human.items()):
        relevant = {
            d: docs[d].text for d, g in labels.items() if g >= config.relevance_level
        }
        topic = topics[qid]
        extracted = nuggets_extract(
            topic_text=f"{topic.title}\n{topic.description}".strip(),
            relevant_docs=relevant,
            doc_freq=doc_freq,
            options=config.extraction,
        )
        counts[qid] = len(extracted)
        with_keywords += sum(bool(n.keywords) for n in extracted)
        rows.extend(
            Nugget(
                topic=topic,
                assessor=assessor,
                document=docs[n.docno],
                start=n.start,
                end=n.end,
                span_text=n.text,
                text=n.text,
                keywords=list(n.keywords),
                client_uuid=uuid.uuid4(),
            )
            for n in extracted
        )
    Nugget.objects.bulk_create(rows, batch_size=1000)
    return counts, with_keywords


def _human_bank(collection: Collection, name: str | None) -> NuggetBank:
    banks = NuggetBank.objects.filter(collection=collection)
    if name is not None:
        banks = banks.filter(name=name)
    else:
        banks = banks.filter(nuggets__document__isnull=False).distinct()
    found = list(banks[:2])
    if len(found) != 1:
        what = f"named {name!r}" if name else "with source spans"
        raise SimulationError(
            f"--nuggets human needs exactly one nugget bank {what} in collection "
            f"{collection.name} (found {len(found)}); import one with import_nuggets"
        )
    return found[0]


def nuggets_extract_human(
    collection: Collection,
    human: Labels,
    assessor,
    config: SimulationConfig,
) -> tuple[dict[str, int], int]:
    """The simulated assessor's nuggets from people's: every nugget of the bank whose
    source span lies in a judged relevant document of its topic, once per topic and
    nugget (its first source by docno and offset). The nugget keeps the person's
    text, span, grade and keywords; (nuggets per qid, with keywords)."""
    bank = _human_bank(collection, config.nugget_bank)
    relevant = {
        (qid, docno)
        for qid, labels in human.items()
        for docno, grade in labels.items()
        if grade >= config.relevance_level
    }
    rows: list[Nugget] = []
    seen: set[tuple[str, str]] = set()
    counts: dict[str, int] = dict.fromkeys(human, 0)
    with_keywords = 0
    source = (
        bank.nuggets.filter(document__isnull=False)
        .select_related("topic", "document")
        .order_by("topic__qid", "document__docno", "start", "pk")
    )
    for nugget in source.iterator(chunk_size=2000):
        qid = nugget.topic.qid
        key = (qid, nugget.source_id or nugget.text)
        document = nugget.document
        if document is None or (qid, document.docno) not in relevant or key in seen:
            continue
        seen.add(key)
        counts[qid] = counts.get(qid, 0) + 1
        with_keywords += bool(nugget.keywords)
        rows.append(
            Nugget(
                topic=nugget.topic,
                assessor=assessor,
                document=document,
                start=nugget.start,
                end=nugget.end,
                span_text=nugget.span_text,
                text=nugget.text,
                keywords=list(nugget.keywords),
                grade=nugget.grade,
                aspect=nugget.aspect,
                source_id=nugget.source_id,
                client_uuid=uuid.uuid4(),
            )
        )
    Nugget.objects.bulk_create(rows, batch_size=1000)
    return counts, with_keywords
