"""Samples in rounds in the app: the next round when the previous one is judged, and
what the sample page shows of the rounds.

:func:`rounds_advance` is run by the Celery task ``nuggets_app.tasks.rounds_advance``
(queued after every judgment of a sample in rounds, and by the sample page's button).
When every document of the latest round has a grade from an assessor assigned to its
topic, it runs a matching job over the pool (the assigned assessors' nuggets) and fits
the job's relevance model with the sample's design (the one orchestrator of the model,
:func:`~nuggets_app.inference.services.job_model.job_model_fit`) on everything judged
so far, weighted by the effective inclusion probabilities, and draws the next round
with its probabilities
(:func:`nuggets_app.pooling.services.rounds.sample_round_next`). The new documents go
to the end of each topic's queue: assessors' positions and judgments stay as they are.

:func:`rounds_overview` gives, per round, the documents drawn and judged and the MAP of
the pool's runs estimated from the rounds up to it (statAP's estimate with the
multi-round weights and the linearised variance: the model-assisted estimator with
``p ≡ 0``), with the mean width of the runs' 95% intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from django.db import transaction

from nuggets_app.collection.services.suite_runs import runs_scores
from nuggets_app.errors import DomainError
from nuggets_app.inference.services.job_model import job_model_fit, job_probabilities
from nuggets_app.inference.services.matching import (
    MatchParams,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.ir.estimator import PLAIN
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.rounds import (
    DocWeight,
    Round,
    round_budgets,
    round_lambdas,
    rounds_prels,
)
from nuggets_app.ir.rounds import round_weights as weights_of
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    Assignment,
    Document,
    Judgment,
    MatchJob,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.pooling.services.rounds import sample_round_next

Labels = dict[str, dict[str, int]]

# The rounds table's MAP: statAP of the rounds judged so far (p ≡ 0), bounded to [0, 1].
ROUNDS_ESTIMATOR = replace(PLAIN, bounded=True)


@dataclass(frozen=True)
class RoundRow:
    """One round on the sample page."""

    number: int
    drawn: int
    judged: int
    runs: int = 0
    mean_map: float = math.nan
    mean_width: float = math.nan


def _judged_grades(sample: Sample) -> tuple[Labels, dict[int, int]]:
    """The human label (the collection's aggregation rule, as every estimate) of each
    sampled document an assessor assigned to its topic judged (``qid -> docno ->
    grade``), and the number of judged documents per round."""
    assigned = set(
        Assignment.objects.filter(sample=sample).values_list("topic_id", "assessor_id")
    )
    items = {
        (t, d): (qid, docno, number)
        for t, d, qid, docno, number in SampleDocument.objects.filter(
            sample=sample
        ).values_list(
            "topic_id", "document_id", "topic__qid", "document__docno", "round"
        )
    }
    judged_by = Judgment.objects.filter(
        topic__in={t for t, _ in items}, relevance__isnull=False, quality_check=False
    ).values_list("topic_id", "document_id", "assessor_id")
    judged = {(t, d) for t, d, a in judged_by if (t, d) in items and (t, a) in assigned}
    grades = human_grades({t for t, _ in judged})
    labels: Labels = {}
    per_round: dict[int, int] = {}
    for key in sorted(judged):
        qid, docno, number = items[key]
        per_round[number] = per_round.get(number, 0) + 1
        labels.setdefault(qid, {})[docno] = grades[key]
    return labels, per_round


def _drawn_per_round(sample: Sample) -> dict[int, int]:
    counts: dict[int, int] = {}
    for number in SampleDocument.objects.filter(sample=sample).values_list(
        "round", flat=True
    ):
        counts[number] = counts.get(number, 0) + 1
    return counts


def round_judged(sample: Sample) -> bool:
    """Every document of the latest round has a grade from an assigned assessor."""
    _, judged = _judged_grades(sample)
    drawn = _drawn_per_round(sample)
    latest = sample.rounds_drawn
    return drawn.get(latest, 0) > 0 and judged.get(latest, 0) >= drawn[latest]


def rounds_advance(*, sample_id: int, force: bool = False) -> bool:
    """Draw the next round if the latest one is judged (or ``force``); True if one was
    drawn. Nothing happens for a one-shot sample or one that drew all its rounds."""
    sample = Sample.objects.select_related("pool").get(pk=sample_id)
    if sample.rounds_drawn >= sample.rounds:
        return False
    if not force and not round_judged(sample):
        return False
    try:
        probabilities = _guide_probabilities(sample)
    except DomainError:
        # Too few labels to fit (e.g. no relevant document yet) or no broker: the
        # next round falls back to its floor, statAP's distribution.
        probabilities = {}
    before = sample.rounds_drawn
    drawn = sample_round_next(sample=sample, probabilities=probabilities, after=before)
    return drawn.rounds_drawn > before


def _guide_probabilities(sample: Sample) -> dict[str, dict[str, float]]:
    """``{qid: {docno: p}}`` of the pool, from a matching job over it (run here) and
    its model fitted with the sample's design; the job is kept, named after the round
    it guided."""
    assessors = sorted(
        set(
            Assignment.objects.filter(sample=sample).values_list(
                "assessor_id", flat=True
            )
        )
    )
    topics = list(Topic.objects.filter(pk__in=sample.documents.values("topic_id")))
    with transaction.atomic():
        job = match_job_launch(
            collection=sample.pool.collection,
            topics=topics,
            source=MatchJob.Source.POOL,
            pool=sample.pool,
            name=f"{sample.name}: guide of round {sample.rounds_drawn + 1}",
            params=MatchParams(nugget_filter={"assessors": assessors}),
        )
    job = match_job_finish_here(job)
    job_model_fit(job=job, sample=sample, reliability=False)
    columns = job_probabilities(job=job, override=False)
    qids = dict(Topic.objects.filter(pk__in=list(columns)).values_list("pk", "qid"))
    ids = {d for docs, _ in columns.values() for d in docs.tolist()}
    docnos = dict(Document.objects.filter(pk__in=ids).values_list("pk", "docno"))
    return {
        qids[t]: {docnos[d]: v for d, v in zip(docs.tolist(), p.tolist(), strict=True)}
        for t, (docs, p) in columns.items()
    }


def _stored(sample: Sample) -> tuple[dict[str, list[Round]], dict[str, list[float]]]:
    rows = SampleDocument.objects.filter(sample=sample).values_list(
        "topic__qid", "document__docno", "round", "round_prob", "order"
    )
    per_topic: dict[str, dict[int, list[tuple[int, str, float]]]] = {}
    for qid, docno, number, prob, order in rows:
        per_topic.setdefault(qid, {}).setdefault(number, []).append(
            (order, docno, float(prob or 1.0))
        )
    rounds: dict[str, list[Round]] = {}
    for qid, by_round in per_topic.items():
        rounds[qid] = [
            Round(n, tuple(d for _, d, _ in sorted(m)), {d: p for _, d, p in m})
            for n, m in sorted(by_round.items())
        ]
    lambdas = {
        qid: round_lambdas(
            sample.draws.get(qid, {}).get("budgets")
            or round_budgets(sample.size, sample.rounds)
        )
        for qid in rounds
    }
    return rounds, lambdas


def rounds_overview(sample: Sample) -> list[RoundRow]:
    """Per drawn round: documents drawn and judged, and the runs' MAP from the rounds
    up to it (mean over runs, mean 95% interval width) once the round is judged."""
    if sample.rounds <= 1:
        return []
    labels, judged = _judged_grades(sample)
    drawn = _drawn_per_round(sample)
    rounds, lambdas = _stored(sample)
    runs = runs_scores(sample.pool.runs.all())
    out: list[RoundRow] = []
    for number in range(1, sample.rounds_drawn + 1):
        row = RoundRow(number, drawn.get(number, 0), judged.get(number, 0))
        if row.judged < row.drawn or not runs:
            out.append(row)
            continue
        weights: dict[str, dict[str, DocWeight]] = {}
        for qid, topic_rounds in rounds.items():
            design = sample.draws.get(qid, {}).get("design", "model")
            weights[qid] = weights_of(
                topic_rounds[:number], lambdas[qid], design=design
            )
        prels = rounds_prels(labels, weights)
        estimates = model_assisted_evaluate(prels, {}, runs, estimator=ROUNDS_ESTIMATOR)
        maps = [e["AP"] for e in estimates.values() if e["AP"].n_topics]
        if maps:
            row = RoundRow(
                number,
                row.drawn,
                row.judged,
                runs=len(maps),
                mean_map=math.fsum(m.estimate for m in maps) / len(maps),
                mean_width=math.fsum(m.ci95[1] - m.ci95[0] for m in maps) / len(maps),
            )
        out.append(row)
    return out
