"""Reads for the agreement page: how far assessors who judged the same documents agree,
on relevance (Cohen's kappa, percent agreement) and on highlighted spans."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from nuggets_app.ir.agreement import (
    cohen_kappa,
    overlap_from_counts,
    percent_agreement,
)
from nuggets_app.ir.spans import covered_chars, intersect_chars
from nuggets_app.models import (
    Assignment,
    Collection,
    Judgment,
    Nugget,
)


@dataclass
class PairAgreement:
    """Agreement of two assessors on one topic's commonly judged documents; the topic
    is named by its collection and qid (two collections may share qids); ``samples``
    names the samples that assign the topic to both (judgments belong to the topic,
    not to one sample, so there may be several, or none)."""

    collection: str
    samples: str
    qid: str
    assessor_a: str
    assessor_b: str
    common: int
    percent: float
    kappa: float
    kappa_binary: float
    nugget_docs: int
    a_chars: int
    b_chars: int
    both_chars: int
    jaccard: float
    dice: float

    CSV_HEADER = (
        "collection",
        "samples",
        "qid",
        "assessor_a",
        "assessor_b",
        "common_docs",
        "percent_agreement",
        "kappa",
        "kappa_binary",
        "nugget_docs",
        "a_chars",
        "b_chars",
        "both_chars",
        "span_jaccard",
        "span_dice",
    )

    def csv_row(self) -> list[str]:
        def fmt(x: float) -> str:
            return "" if math.isnan(x) else f"{x:.4f}"

        return [
            self.collection,
            self.samples,
            self.qid,
            self.assessor_a,
            self.assessor_b,
            str(self.common),
            fmt(self.percent),
            fmt(self.kappa),
            fmt(self.kappa_binary),
            str(self.nugget_docs),
            str(self.a_chars),
            str(self.b_chars),
            str(self.both_chars),
            fmt(self.jaccard),
            fmt(self.dice),
        ]


def topic_agreement() -> list[PairAgreement]:
    """Per topic and pair of assessors who judged the same documents: percent agreement
    and Cohen's kappa (graded and binary) on relevance, and character overlap of their
    nugget spans over the documents both judged (micro-averaged over documents)."""
    labels: dict[int, dict[int, dict[int, int]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    # One grade per assessor and document: the label where there is one (read last),
    # else the check of a known answer.
    rows = (
        Judgment.objects.filter(relevance__isnull=False)
        .order_by("-quality_check")
        .values_list(
            "topic_id",
            "assessor_id",
            "document_id",
            "relevance",
            "topic__qid",
            "assessor__username",
            "topic__collection_id",
        )
    )
    qids, names, thresholds = {}, {}, {}
    for topic_id, assessor_id, doc_id, rel, qid, name, collection_id in rows:
        labels[topic_id][assessor_id][doc_id] = rel
        qids[topic_id], names[assessor_id] = qid, name
        thresholds[topic_id] = collection_id
    found = Collection.objects.filter(pk__in=set(thresholds.values()))
    collections = {c.pk: c.relevance_level for c in found}
    collection_names = {c.pk: c.name for c in found}
    spans: dict[tuple[int, int, int], list[tuple[int, int]]] = defaultdict(list)
    for topic_id, assessor_id, doc_id, start, end in Nugget.objects.filter(
        topic_id__in=[t for t in labels if len(labels[t]) > 1], assessor__isnull=False
    ).values_list("topic_id", "assessor_id", "document_id", "start", "end"):
        spans[(topic_id, assessor_id, doc_id)].append((start, end))
    assigned = _assigned_samples(list(labels))
    result = []
    for topic_id in sorted(
        labels,
        key=lambda t: (collection_names[thresholds[t]], _qid_key(qids[t])),
    ):
        by_assessor = labels[topic_id]
        ids = sorted(by_assessor, key=lambda a: names[a])
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                pair = _pair_agreement(
                    by_assessor[a],
                    by_assessor[b],
                    {d: spans.get((topic_id, a, d), []) for d in by_assessor[a]},
                    {d: spans.get((topic_id, b, d), []) for d in by_assessor[b]},
                    cut=collections[thresholds[topic_id]],
                )
                if pair is not None:
                    result.append(
                        PairAgreement(
                            collection_names[thresholds[topic_id]],
                            ", ".join(
                                sorted(
                                    assigned[(topic_id, a)] & assigned[(topic_id, b)]
                                )
                            ),
                            qids[topic_id],
                            names[a],
                            names[b],
                            *pair,
                        )
                    )
    return result


def _assigned_samples(topic_ids: list[int]) -> dict[tuple[int, int], set[str]]:
    """The names of the samples assigning each (topic, assessor)."""
    out: dict[tuple[int, int], set[str]] = defaultdict(set)
    rows = Assignment.objects.filter(topic_id__in=topic_ids).values_list(
        "topic_id", "assessor_id", "sample__name"
    )
    for topic_id, assessor_id, sample in rows:
        out[(topic_id, assessor_id)].add(sample)
    return out


def _pair_agreement(
    a: dict[int, int],
    b: dict[int, int],
    a_spans: dict[int, list[tuple[int, int]]],
    b_spans: dict[int, list[tuple[int, int]]],
    *,
    cut: int,
) -> tuple | None:
    """The PairAgreement figures after (qid, a, b), or None without common documents."""
    common = sorted(set(a) & set(b))
    if not common:
        return None
    la, lb = [a[d] for d in common], [b[d] for d in common]
    a_chars = b_chars = both = docs = 0
    for d in common:
        sa, sb = a_spans[d], b_spans[d]
        if sa or sb:
            docs += 1
            a_chars += covered_chars(sa)
            b_chars += covered_chars(sb)
            both += intersect_chars(sa, sb)
    overlap = overlap_from_counts(a_chars, b_chars, both)
    kappa_binary = cohen_kappa([x >= cut for x in la], [y >= cut for y in lb])
    return (
        len(common),
        percent_agreement(la, lb),
        cohen_kappa(la, lb),
        kappa_binary,
        docs,
        a_chars,
        b_chars,
        both,
        overlap.jaccard,
        overlap.dice,
    )


def _qid_key(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)
