"""The automatic judges of a collection audited against the people's statAP sample.

The people's side is what statAP reads (:func:`nuggets_app.evaluation.selectors.
sample_prels`): the sample's judged documents with the human label the exports give
(the collection's aggregation of its assessors' grades) and their inclusion
probabilities. Documents of the pool the sample did not judge carry their
probability under the sample's design where it is known
(:func:`nuggets_app.pooling.selectors.sample_design`), else
:data:`UNDRAWN_STAND_IN`: the audit reads an unjudged pair's probability only to know
that it was not certain to be drawn. The maths is :mod:`nuggets_app.ir.judge_audit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nuggets_app.evaluation.selectors import sample_prels, statap_samples
from nuggets_app.ir.judge_audit import JudgeAudit, PoolPair, audit_judge
from nuggets_app.ir.prels import TopicPrels, topic_key
from nuggets_app.judges.selectors import (
    JudgeAuditError,
    JudgeReading,
    collection_judges,
    judge_reading,
)
from nuggets_app.judges.services import judge_mark_used
from nuggets_app.models import Collection, Judge, PoolDocument, Sample
from nuggets_app.pooling.selectors import sample_design

# The inclusion probability given to an unjudged pooled pair whose probability the
# sample's design does not give (rounds, run quotas): any value below 1 reads alike.
UNDRAWN_STAND_IN = 0.5


def audit_sample(*, collection: Collection, name: str | None = None) -> Sample:
    """The people's sample an audit reads: the statAP (or uniform) sample ``name`` of
    the collection, else its latest one."""
    samples = statap_samples(collection)
    if name is not None:
        samples = [s for s in samples if s.name == name]
        if not samples:
            raise JudgeAuditError(
                f"collection {collection.name!r} has no statAP sample named {name!r}"
            )
    if not samples:
        raise JudgeAuditError(
            f"collection {collection.name!r} has no statAP sample of people's "
            "judgments: draw one and judge it, then audit the judges against it"
        )
    if len(samples) > 1 and name is None:
        return max(samples, key=lambda s: (s.created_at, s.pk))
    return samples[0]


@dataclass(frozen=True)
class PeopleSide:
    """What the people's sample says of its pool, read once for every judge: the
    pooled docnos per topic, the judged documents' labels and π (statAP's prels),
    and the design's π of the others."""

    pooled: dict[str, list[str]]
    prels: dict[str, TopicPrels]
    design: dict[str, dict[str, float]]


def people_side(*, sample: Sample) -> PeopleSide:
    """The people's side of the audit for ``sample`` (topics in numeric order,
    documents by docno)."""
    prels = sample_prels(sample)
    qids = set(sample.draws) | set(prels)
    pooled: dict[str, list[str]] = {}
    rows = PoolDocument.objects.filter(
        pool=sample.pool_id, topic__qid__in=qids
    ).values_list("topic__qid", "document__docno")
    for qid, docno in rows.iterator(chunk_size=20000):
        pooled.setdefault(qid, []).append(docno)
    return PeopleSide(
        {q: sorted(pooled[q]) for q in sorted(pooled, key=topic_key)},
        prels,
        sample_design(sample=sample),
    )


def _inclusion_prob(people: PeopleSide, qid: str, docno: str) -> float:
    judged = people.prels.get(qid)
    prob = judged.inclusion_prob.get(docno) if judged is not None else None
    if prob is not None:
        return prob
    prob = people.design.get(qid, {}).get(docno)
    # A drawn document not judged yet counts as not drawn, as statAP reads only the
    # judged ones.
    return prob if prob is not None and 0 < prob < 1 else UNDRAWN_STAND_IN


def pool_pairs(*, people: PeopleSide, reading: JudgeReading) -> list[PoolPair]:
    """Every pooled (topic, document) of the sample's topics, with the judge's value
    (None: not labelled), the people's label (None: not judged in the sample) and
    the inclusion probability."""
    pairs = []
    for qid, docnos in people.pooled.items():
        judged = people.prels.get(qid)
        values = reading.values.get(qid, {})
        for docno in docnos:
            pairs.append(
                PoolPair(
                    qid=qid,
                    docno=docno,
                    judge_grade=values.get(docno),
                    human_grade=judged.rel.get(docno) if judged else None,
                    inclusion_prob=_inclusion_prob(people, qid, docno),
                )
            )
    return pairs


@dataclass(frozen=True)
class JudgeAuditEntry:
    """One judge audited: what its values are (``what``) and from which value it
    calls a document relevant (``judge_level``), its labels in all and those beyond
    the sample's pool (kept for runs imported later, not audited), and the audit."""

    judge: Judge
    what: str
    judge_level: float
    labels: int
    beyond_pool: int
    audit: JudgeAudit


@dataclass(frozen=True)
class CollectionJudgeAudit:
    """The judges of a collection audited against one people's sample at the
    collection's relevance level."""

    collection: Collection
    sample: Sample
    relevance_level: int
    entries: list[JudgeAuditEntry]


def judge_audit_build(
    *,
    collection: Collection,
    judge_names: Sequence[str] | None = None,
    sample_name: str | None = None,
) -> CollectionJudgeAudit:
    """Audit the collection's judges (``judge_names``: these only) against the
    people's sample (``sample_name``, else the latest statAP sample), at the
    collection's relevance level: the one computation the page, the command and its
    JSON share (:func:`nuggets_app.ir.judge_audit.audit_judge` over
    :func:`pool_pairs`). Each audited judge is marked used."""
    judges = collection_judges(collection=collection)
    if judge_names is not None:
        known = {j.name for j in judges}
        missing = [n for n in judge_names if n not in known]
        if missing:
            raise JudgeAuditError(
                f"collection {collection.name!r} has no judge named {missing[0]!r}"
            )
        judges = [j for j in judges if j.name in set(judge_names)]
    if not judges:
        raise JudgeAuditError(
            f"collection {collection.name!r} has no judge: import one first "
            "(manage.py import_judge_labels or the judges page)"
        )
    sample = audit_sample(collection=collection, name=sample_name)
    level = collection.relevance_level
    people = people_side(sample=sample)
    entries = []
    for judge in judges:
        reading = judge_reading(judge=judge, level=level)
        pairs = pool_pairs(people=people, reading=reading)
        audit = audit_judge(
            pairs, relevance_level=level, judge_relevance_level=reading.level
        )
        labels = sum(len(docs) for docs in reading.values.values())
        in_pool = sum(1 for pair in pairs if pair.judge_grade is not None)
        entries.append(
            JudgeAuditEntry(
                judge, reading.what, reading.level, labels, labels - in_pool, audit
            )
        )
        judge_mark_used(judge=judge, by=f"the audit against sample {sample.name}")
    return CollectionJudgeAudit(collection, sample, level, entries)
