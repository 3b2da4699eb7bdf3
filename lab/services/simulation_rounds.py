"""The simulation with a sample drawn in rounds (``manage.py simulate --rounds R``).

As :func:`lab.services.simulation.simulation_run`, except that the
sample (``--sample-size``: the total budget per topic) is drawn in ``R`` rounds by
:mod:`nuggets_app.pooling.services.rounds`: after each round the simulated assessor
judges the new documents and extracts nuggets, a matching job runs over the pool and
the relevance model is fitted on everything judged so far; its probabilities guide the
next round (``design="model"``) or pick its documents (``design="top"``, HiCAL-style,
biased). The report's prels carry each document's effective inclusion probability and
variance factor (:class:`RoundsData`), so statAP and the model-assisted estimator use
the multi-round weights. Each round's model is the job's own fit with the sample's design
(as ``match --fit`` fits it), so the product's one orchestrator guides the rounds.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.maths.simulation import SimulationError, rule_parse
from lab.services.simulation import (
    Progress,
    SimulationData,
    _assessor,
    _baseline,
    _job_outcome,
    _judge,
    _match,
    _pool_docnos,
    judged_topics_only,
    model_inferred,
    simulation_check,
    simulation_data,
    simulation_pool,
)
from lab.services.simulation_config import (
    SimulationConfig,
)
from lab.services.simulation_job import job_fit_and_figures
from lab.services.simulation_nuggets import (
    nuggets_extract_human,
    nuggets_extract_simulated,
)
from nuggets_app.collection.services.suite_runs import qrels_read, runs_scores
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.models import Collection, Run, Sample, SampleDocument
from nuggets_app.pooling.services.rounds import (
    sample_round_next,
    sample_rounds_draw,
    sample_var_weights,
)


@dataclass
class RoundsData(SimulationData):
    """:class:`SimulationData` of a sample in rounds: ``var_weight`` (qid -> docno ->
    v) for the prels, and per round the documents judged and the design."""

    var_weight: dict[str, dict[str, float]] = field(default_factory=dict)
    rounds: dict[str, Any] = field(default_factory=dict)


def _round_counts(sample: Sample) -> list[int]:
    counts: dict[int, int] = {}
    for number in SampleDocument.objects.filter(sample=sample).values_list(
        "round", flat=True
    ):
        counts[number] = counts.get(number, 0) + 1
    return [counts.get(t, 0) for t in range(1, sample.rounds_drawn + 1)]


def rounds_run(
    *,
    collection: Collection,
    qrels_path: str | Path,
    runs: Iterable[Run],
    config: SimulationConfig,
    rounds: int,
    design: str = "model",
    progress: Progress | None = None,
) -> RoundsData:
    """Pool, ``rounds`` rounds of sampling and judging, matching, model and baseline."""
    say = progress or (lambda message: None)
    runs = sorted(runs, key=lambda r: r.name)
    if not runs:
        raise SimulationError(f"collection {collection.name} has no runs to pool")
    if config.inference != "model":
        raise SimulationError("--rounds needs --inference model (the model guides it)")
    rule_parse(config.rule)
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    truth = qrels_read(qrels_path)
    simulation_check(collection, config)
    pool = simulation_pool(collection, runs, config, truth)
    run_scores, left_out = judged_topics_only(runs_scores(runs), truth)
    pooled = _pool_docnos(pool)
    size = config.sample_size
    if config.sample_fraction is not None:
        sizes = [len(d) for d in pooled.values()]
        size = max(1, round(config.sample_fraction * sum(sizes) / max(len(sizes), 1)))
    size = max(size, rounds)
    sample = sample_rounds_draw(
        pool=pool,
        budget=size,
        rounds=rounds,
        seed=config.seed,
        design=design,
        name=f"sim-rounds{rounds}-{design}-n{size}-seed{config.seed}",
    )
    assessor = _assessor(config.assessor)
    extract = (
        nuggets_extract_human
        if config.nuggets == "human"
        else nuggets_extract_simulated
    )
    job = None
    while True:
        if job is not None:
            job.delete()  # its labels are about to change; its p guided this round
        human = _judge(sample, truth, assessor)
        nuggets, keyword_nuggets = extract(collection, human, assessor, config)
        job = _match(collection, pool, list(pooled), assessor, config)
        prediction = job_fit_and_figures(job=job, sample=sample, runs={}, config=config)
        now = time.perf_counter()
        timings[f"round {sample.rounds_drawn}"] = round(now - clock, 3)
        clock = now
        say(f"round {sample.rounds_drawn}: {timings[f'round {sample.rounds_drawn}']}s")
        if sample.rounds_drawn >= rounds:
            break
        sample = sample_round_next(
            sample=sample, probabilities=prediction.probabilities
        )
    scores, _ = _job_outcome(job, DecisionRule(kind="threshold", threshold=1.0))
    inferred = model_inferred(prediction.probabilities, human, config.rule)
    baseline = _baseline(collection, pooled, human, config)
    return simulation_data(
        config=config,
        collection=collection,
        sample=sample,
        run_scores=run_scores,
        pooled=pooled,
        human=human,
        truth=truth,
        nuggets=(nuggets, keyword_nuggets),
        job=job,
        outcome=(scores, inferred, baseline),
        timings=timings,
        figures=prediction,
        kind=RoundsData,
        topics_without_qrels=left_out,
        var_weight=sample_var_weights(sample),
        rounds={
            "rounds": rounds,
            "design": design,
            "budget": size,
            "judged_per_round": _round_counts(sample),
        },
    )
