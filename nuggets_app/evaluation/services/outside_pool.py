"""A new run's documents outside the pool: the job's calibration, honest intervals and
the estimate with a top-up sample (the maths: :mod:`nuggets_app.ir.outside_pool`).

:func:`job_calibration` learns from the pooled documents that one group of pooled runs
alone contributed how the job's model errs on documents like a new run's unpooled ones;
:func:`new_run_estimates` estimates a new run with its unpooled documents' p
calibrated, its interval widened by the model's error on them, or, where a judged
top-up sample covers a topic, corrected by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from nuggets_app.evaluation.selectors import job_inputs_version, sample_prels
from nuggets_app.evaluation.services.estimates import (
    EstimateError,
    EstimateInputs,
    RunEstimates,
    estimate_sample,
    job_crossfit,
    job_pool_runs,
    runs_model_assisted,
)
from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.model_assisted import (
    model_assisted_evaluate,
    ranked,
    topic_estimates,
    topic_samples,
)
from nuggets_app.ir.outside_pool import (
    Calibration,
    Plan,
    RunInterval,
    TopicUncertainty,
    calibration_estimate,
    contributors,
    draws_for_width,
    run_interval,
    top_up_prels,
    topic_error,
    unique_documents,
)
from nuggets_app.ir.prels import TopicPrels, ranking_order
from nuggets_app.ir.reusability import run_groups
from nuggets_app.ir.run_intervals import Z_95
from nuggets_app.operations.services.computed import kept, kept_key

Scores = Mapping[str, Mapping[str, float]]
# {qid: {docno: (relevance, π)}} of one run's judged top-up sample.
TopUp = Mapping[str, Mapping[str, tuple[int, float]]]

CALIBRATION_NOTE = (
    "The documents that only one group of the pooled runs brought into the pool are "
    "what a new system's documents outside the pool look like. The relevance model's "
    "p of those the sample judged, weighed by 1/π against their labels, gives the "
    "ratio by which it over- or under-counts such documents; a new run's unpooled "
    "documents get their p times that ratio (shrunk towards 1 when the sample judged "
    "few of them), and their interval adds the model's remaining error on them."
)


def job_calibration(
    *,
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    pooled: Mapping[str, Scores],
    depth: int | None,
    level: int,
) -> Calibration:
    """The job's calibration of p outside the pool, from its pooled runs' unique
    documents (groups by the runs' name prefix; each run alone when they share one)."""
    rankings = {
        name: {qid: ranking_order(docs) for qid, docs in run.items()}
        for name, run in pooled.items()
    }
    of = contributors(rankings, run_groups(rankings))
    unique = unique_documents(rankings, of, depth)
    return calibration_estimate(unique=unique, probs=probs, judged=prels, level=level)


@dataclass(frozen=True)
class NewRunFigures:
    """One new run: its estimates (the AP interval widened), the interval's parts,
    and the topics its top-up sample corrected."""

    estimates: RunEstimates
    interval: RunInterval
    topped_topics: tuple[str, ...] = ()
    # Per topic still counted by the model: what a top-up would correct.
    plans: Mapping[str, Plan] = field(default_factory=dict)

    @property
    def half_width(self) -> float:
        """``1.96 sqrt(V)`` of the run's interval as it stands (top-ups judged)."""
        return Z_95 * max(self.interval.var, 0.0) ** 0.5

    def draws_for(self, half_width: float) -> tuple[int, float] | None:
        """Top-up draws per topic (and documents judged per topic) expected to bring
        the interval to ``± half_width``: (0, 0) when it is there already; None when
        no top-up can."""
        if self.half_width <= half_width:
            return 0, 0.0
        return draws_for_width(
            half_width, self.interval.var_sampling, self.interval.n_topics, self.plans
        )


def new_run_estimates(
    *,
    name: str,
    run: Scores,
    inputs: EstimateInputs,
    unpooled_p: Mapping[str, Mapping[str, float]],
    depth: int | None,
    calibration: Calibration,
    shift: float | None,
    top_up: TopUp | None = None,
    estimator: Estimator = REPORTED,
) -> NewRunFigures:
    """The new run's figures by ``estimator``: its unpooled documents
    (``unpooled_p``: uncalibrated p of every scored unpooled document) with the
    calibrated q, the model's error on them in the AP interval; a topic whose top-up
    sample is judged uses it instead (the design's correction). The bias check stays
    the pool sample's."""
    own: dict[str, dict[str, float]] = {}
    lists: dict[str, list[str]] = {}
    for qid, docs in run.items():
        top = ranked(docs, depth)
        lists[qid] = top
        scored = unpooled_p.get(qid, {})
        raw = {d: scored[d] for d in top if d in scored}
        if raw:
            own[qid] = raw
    calibrated = {
        q: {d: calibration.apply(p) for d, p in docs.items()} for q, docs in own.items()
    }
    base = runs_model_assisted(
        prels=inputs.prels,
        probs=inputs.probs,
        runs={name: run},
        level=inputs.level,
        unsampled=calibrated,
        shift=shift,
        design=inputs.design,
        estimator=estimator,
    )[name]
    topped = {q: d for q, d in (top_up or {}).items() if d and q in own}
    judged = top_up_prels(inputs.prels, topped) if topped else inputs.prels
    figures = base
    if topped:
        again = model_assisted_evaluate(
            judged,
            inputs.probs,
            {name: {q: dict(d) for q, d in run.items()}},
            estimator=estimator,
            level=inputs.level,
            unsampled=calibrated,
            design=inputs.design,
        )[name]
        figures = RunEstimates(name, {m: again[m] for m in base.measures}, base.check)
    # The same per-topic samples and estimator as the figure's.
    samples = topic_samples(
        judged,
        inputs.probs,
        estimator=estimator,
        level=inputs.level,
        unsampled=calibrated,
        design=inputs.design,
    )
    errors: dict[str, TopicUncertainty] = {}
    plans: dict[str, Plan] = {}
    for topic in figures.ap.topics:
        mine = own.get(topic.qid)
        if not mine or topic.qid in topped:
            continue
        sample, ranking = samples[topic.qid], lists[topic.qid]
        ap = topic_estimates(sample, ranking)["AP"].estimate
        errors[topic.qid], plans[topic.qid] = topic_error(
            sample, ranking, raw=mine, ap=ap, calibration=calibration
        )
    interval = run_interval(figures.ap, errors, calibration)
    widened = RunEstimates(
        name,
        {
            **figures.measures,
            "AP": replace(figures.ap, var=interval.var, ci95=interval.ci95),
        },
        figures.check,
    )
    return NewRunFigures(widened, interval, tuple(sorted(topped)), plans)


# The interval half-width the pages and evaluate plan a top-up for.
TARGET_HALF_WIDTH = 0.05


def top_up_advice(
    figures: NewRunFigures,
    *,
    job_id: int,
    run: str,
    half_width: float = TARGET_HALF_WIDTH,
) -> str:
    """One sentence for a new run whose figure rests on documents outside the pool
    counted by the model and whose interval is wider than ``± half_width`` ("" when
    neither holds): how much of its interval that is, and the top-up that would
    correct it."""
    parts = figures.interval
    if parts.documents == 0 or figures.half_width <= half_width:
        return ""
    share = round(100 * parts.model_share)
    found = figures.draws_for(half_width)
    if found is None:
        plan = (
            f"no top-up brings its interval to ±{half_width:g}: its pooled part alone "
            "is wider"
            if Z_95 * parts.var_sampling**0.5 > half_width
            else "a top-up as large as its unpooled documents would be needed"
        )
    else:
        draws, judged = found
        plan = (
            f"a top-up of {draws} draws per topic (about {judged:.0f} judgments per "
            f"topic) is expected to bring its interval to ±{half_width:g}"
        )
    return (
        f"{parts.documents} of its documents outside the pool (about "
        f"{parts.expected_relevant:.1f} relevant by the calibrated model) are counted "
        f"by the model alone, {share}% of its interval's variance: do not take its "
        f"figure as judged. Draw a top-up sample of them for job {job_id} and run "
        f"{run} and have it judged; {plan}."
    )


def new_run_flag_reason(figures: NewRunFigures, reason: str) -> str:
    """A flagged new run's reason: the bias check's, and when its figure rests on
    documents outside the pool counted by the model, that the top-up corrects it
    (the model-assisted figure is then the model's there, not the sample's). Where
    its judged top-up corrects some topics, it says so and counts the documents of
    the others."""
    if not reason or figures.interval.documents == 0:
        return reason
    head = reason.split(";", 1)[0]
    if figures.topped_topics:
        topics = ", ".join(figures.topped_topics)
        return (
            f"{head}; its judged top-up corrects topics {topics}, and its figure "
            f"still counts {figures.interval.documents} documents outside the pool "
            "of other topics by the model alone"
        )
    return (
        f"{head}; its figure counts {figures.interval.documents} documents outside "
        "the pool by the model alone, so judge a top-up sample of them before "
        "trusting it"
    )


def job_calibration_shown(*, job) -> Calibration | None:
    """The calibration the job page shows: from the job's pooled runs and the sample
    its model was fitted with (None without a fitted model, a sample or pooled
    runs). Kept per the job's inputs: it cross-fits the model over every document
    of the job, which a page cannot redo on each request of a large job."""
    key = kept_key("job-calibration", job_inputs_version(job))
    return kept(key, lambda: (_job_calibration(job),))[0]


def _job_calibration(job) -> Calibration | None:
    pooled = job_pool_runs(job)
    sample = estimate_sample(job)
    if not pooled or sample is None:
        return None
    try:
        probs = job_crossfit(job=job, sample=sample)
    except EstimateError:
        return None
    pool = job.pool if job.pool_id is not None else sample.pool
    return job_calibration(
        prels=sample_prels(sample),
        probs=probs,
        pooled=pooled,
        depth=pool.depth,
        level=job.relevance_level,
    )


def fewer_topics(
    estimates: Mapping[str, RunEstimates], new: Iterable[str]
) -> dict[str, str]:
    """``{new run: "k of n topics"}`` for the new runs averaged over fewer topics than
    the most any run is: their mean is over other topics, not comparable."""
    most = max((e.ap.n_topics for e in estimates.values()), default=0)
    return {
        name: f"{estimates[name].ap.n_topics} of {most} topics"
        for name in sorted(new)
        if name in estimates and estimates[name].ap.n_topics < most
    }
