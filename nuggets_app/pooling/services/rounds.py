"""Samples in rounds: round 1 by statAP's design, later rounds guided by the model.

The maths is :mod:`nuggets_app.ir.rounds`. A sample in rounds is a statAP
:class:`~nuggets_app.models.Sample` with ``rounds > 1``: its ``size`` is the budget per
topic, split into near-equal round budgets kept per topic in ``Sample.draws[qid]``
(``budgets``, ``design``). Every sampled document records its round, its conditional
inclusion probability in that round (``round_prob``), the effective inclusion
probability ``1/w`` (``inclusion_prob``, what prels and the estimators use) and its
variance factor; the last two are recomputed for every document when a round is added.
New documents go to the end of the topic's queue, so an assessor's work is not
disturbed. Round ``t`` of a topic is drawn with the generator seeded
``"{seed}:{qid}:{t}"``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from django.db import transaction

from nuggets_app.ir.rounds import (
    DESIGNS,
    Round,
    draw_first_round,
    draw_next_round,
    round_budgets,
    round_lambdas,
    round_weights,
)
from nuggets_app.ir.sampling import SamplingError
from nuggets_app.models import Pool, Sample, SampleDocument
from nuggets_app.pooling.services.pools import Progress, qid_sort_key
from nuggets_app.pooling.services.samples import SampleError, _topic_pools

_BATCH = 5000
Probabilities = Mapping[str, Mapping[str, float]]  # qid -> docno -> p


def sample_rounds_draw(
    *,
    pool: Pool,
    budget: int,
    rounds: int,
    seed: int,
    name: str,
    design: str = "model",
    progress: Progress | None = None,
) -> Sample:
    """Create a sample of ``budget`` documents per topic in ``rounds`` rounds and draw
    round 1 (statAP's design). The same name with the same parameters returns the
    existing sample; other parameters under a taken name are refused."""
    if rounds < 2:
        raise SampleError(f"rounds must be at least 2, got {rounds}")
    if design not in DESIGNS:
        raise SampleError(f"design must be one of {', '.join(DESIGNS)}, got {design}")
    try:
        budgets = round_budgets(budget, rounds)
    except SamplingError as error:
        raise SampleError(str(error)) from error
    wanted = {"method": Sample.Method.STATAP, "size": budget, "seed": seed}
    with transaction.atomic():
        existing = Sample.objects.filter(pool=pool, name=name).first()
        if existing is not None:
            if existing.rounds != rounds or any(
                getattr(existing, k) != v for k, v in wanted.items()
            ):
                raise SampleError(
                    f"sample {name} of pool {pool.name} exists with other parameters; "
                    "choose a new name"
                )
            return existing
        sample = Sample.objects.create(
            pool=pool, name=name, rounds=rounds, rounds_drawn=1, **wanted
        )
        topics = _topic_pools(pool)
        if not topics:
            raise SampleError(f"pool {pool.name} is empty; build it first")
        rows: list[SampleDocument] = []
        ordered = sorted(topics.items(), key=lambda item: qid_sort_key(item[1].qid))
        for done, (topic_id, topic) in enumerate(ordered, start=1):
            rng = random.Random(f"{seed}:{topic.qid}:1")
            first = draw_first_round(topic.prior, budgets[0], rng)
            weights = round_weights([first], round_lambdas(budgets))
            sample.draws[topic.qid] = {
                "pool_size": len(topic.prior),
                "distinct": len(first.order),
                "budgets": budgets,
                "design": design,
                "pi": "rounds",
            }
            rows.extend(
                SampleDocument(
                    sample=sample,
                    topic_id=topic_id,
                    document_id=topic.document_ids[docno],
                    inclusion_prob=weights[docno].inclusion_prob,
                    round=1,
                    round_prob=weights[docno].round_prob,
                    var_weight=weights[docno].var_weight,
                    order=position,
                )
                for position, docno in enumerate(first.order, start=1)
            )
            if progress is not None:
                progress(done, len(topics))
        SampleDocument.objects.bulk_create(rows, batch_size=_BATCH)
        sample.save(update_fields=["draws"])
    return sample


def _stored_rounds(
    rows: list[SampleDocument], docnos: Mapping[int, str]
) -> list[Round]:
    """The rounds of one topic as drawn: order by queue position, ``π_t`` as stored
    (the undrawn documents' ``π_t`` are not needed by the weights)."""
    by_round: dict[int, list[SampleDocument]] = {}
    for row in sorted(rows, key=lambda r: r.order):
        by_round.setdefault(row.round, []).append(row)
    return [
        Round(
            number,
            tuple(docnos[r.document_id] for r in members),
            {docnos[r.document_id]: float(r.round_prob or 1.0) for r in members},
        )
        for number, members in sorted(by_round.items())
    ]


def sample_round_next(
    *,
    sample: Sample,
    probabilities: Probabilities,
    after: int | None = None,
    progress: Progress | None = None,
) -> Sample:
    """Draw the next round of every topic with the model's ``p`` (``probabilities``:
    qid -> docno -> p; a missing document has p = 0) and reweight every document.

    ``after``: draw only if the sample has drawn exactly that many rounds (else return
    it unchanged), so two concurrent requests never draw two rounds."""
    with transaction.atomic():
        sample = Sample.objects.select_for_update().get(pk=sample.pk)
        if after is not None and sample.rounds_drawn != after:
            return sample
        if sample.rounds_drawn >= sample.rounds:
            raise SampleError(
                f"sample {sample.name} has drawn all its {sample.rounds} rounds"
            )
        number = sample.rounds_drawn + 1
        topics = _topic_pools(sample.pool)
        existing: dict[int, list[SampleDocument]] = {}
        for row in sample.documents.all():
            existing.setdefault(row.topic_id, []).append(row)
        changed: list[SampleDocument] = []
        added: list[SampleDocument] = []
        ordered = sorted(topics.items(), key=lambda item: qid_sort_key(item[1].qid))
        for done, (topic_id, topic) in enumerate(ordered, start=1):
            record = sample.draws.get(topic.qid, {})
            budgets = record.get("budgets") or round_budgets(sample.size, sample.rounds)
            design = record.get("design", "model")
            lambdas = round_lambdas(budgets)
            rows = existing.get(topic_id, [])
            docnos = {v: k for k, v in topic.document_ids.items()}
            rounds = _stored_rounds(rows, docnos)
            drawn = [d for r in rounds for d in r.order]
            nxt = draw_next_round(
                topic.prior,
                probabilities.get(topic.qid, {}),
                drawn,
                budgets[number - 1],
                number,
                lambdas,
                random.Random(f"{sample.seed}:{topic.qid}:{number}"),
                design=design,
            )
            weights = round_weights([*rounds, nxt], lambdas, design=design)
            for row in rows:
                w = weights[docnos[row.document_id]]
                row.inclusion_prob, row.var_weight = w.inclusion_prob, w.var_weight
                changed.append(row)
            last = max((r.order for r in rows), default=0)
            added.extend(
                SampleDocument(
                    sample=sample,
                    topic_id=topic_id,
                    document_id=topic.document_ids[docno],
                    inclusion_prob=weights[docno].inclusion_prob,
                    round=number,
                    round_prob=weights[docno].round_prob,
                    var_weight=weights[docno].var_weight,
                    order=last + position,
                )
                for position, docno in enumerate(nxt.order, start=1)
            )
            record["distinct"] = len(drawn) + len(nxt.order)
            sample.draws[topic.qid] = record
            if progress is not None:
                progress(done, len(topics))
        SampleDocument.objects.bulk_update(
            changed, ["inclusion_prob", "var_weight"], batch_size=_BATCH
        )
        SampleDocument.objects.bulk_create(added, batch_size=_BATCH)
        sample.rounds_drawn = number
        sample.save(update_fields=["rounds_drawn", "draws"])
    return sample


def sample_var_weights(sample: Sample) -> dict[str, dict[str, float]]:
    """``qid -> docno -> v`` of a sample in rounds (empty for a one-shot sample)."""
    out: dict[str, dict[str, float]] = {}
    rows = SampleDocument.objects.filter(
        sample=sample, var_weight__isnull=False
    ).values_list("topic__qid", "document__docno", "var_weight")
    for qid, docno, var in rows:
        out.setdefault(qid, {})[docno] = var
    return out
