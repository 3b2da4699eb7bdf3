"""Evaluating a run that never contributed to the pool against a finished job.

A new run retrieves three kinds of documents for a topic of the job:

* **pooled**: the job scored them; their p is the job's cross-fitted p, as for every
  pooled run;
* **unpooled**: in the collection, not among the job's documents; those ranked within
  the pool's depth are scored for the job (:mod:`nuggets_app.inference.services.
  unpooled`: matcher evidence and features with the job's stored corpus statistics)
  and get p from the cross-fit model of their topic's fold, z-scored beside the pool
  (:mod:`nuggets_app.learning.unpooled`). Deeper ones count as non-relevant, as the
  pooled runs' documents below the pool depth do;
* **not in the collection**: no text to score (:data:`NOT_IN_COLLECTION_RULE`).

Every run, pooled or new, is then estimated by the default model-assisted estimator
with the same p: the pool P of each topic becomes the job's documents plus the scored
unpooled documents of the new runs. The new runs' unpooled documents were never
sampled (π = 0), so they enter through p alone: their ŷ is p, with no residual
correction, and the interval covers the sampling variance of the pooled part only
(:data:`NEW_RUN_NOTE`; derivation in docs/explanation/model-assisted.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from django.db.models import Count

from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.evaluation.services.estimates import (
    EstimateError,
    EstimateInputs,
    RunEstimates,
    Scores,
    flag_reasons,
    job_crossfit_fit,
    job_pool_runs,
    pooled_estimates,
    runs_model_assisted,
)
from nuggets_app.evaluation.services.outside_pool import (
    NewRunFigures,
    TopUp,
    fewer_topics,
    job_calibration,
    new_run_estimates,
    new_run_flag_reason,
    top_up_advice,
)
from nuggets_app.evaluation.services.top_ups import stored_top_ups
from nuggets_app.inference.services.unpooled import (
    UNPOOLED_INLINE,
    UnpooledProgress,
    unpooled_ensure,
    unpooled_features,
    unpooled_progress,
)
from nuggets_app.ir.bias_check import bias_shift
from nuggets_app.ir.outside_pool import Calibration, RunInterval
from nuggets_app.ir.prels import ranking_order, topic_key
from nuggets_app.learning.crossfit import crossfit_by_docno
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.learning.unpooled import crossfit_beside_pool
from nuggets_app.models import (
    Document,
    JobNewRun,
    MatchJob,
    Run,
    Sample,
    UnpooledScore,
)
from nuggets_app.pooling.selectors import sample_design

LOOKUP_BATCH = 5000

NOT_IN_COLLECTION_RULE = (
    "Documents that are not in the collection have no text to score: they keep their "
    "rank in the run and count as non-relevant (p = 0), as an unpooled document does "
    "in every pooled measure."
)
NEW_RUN_NOTE = (
    "A run marked 'not in the pool' did not contribute to the pool: its documents "
    "outside the pool, down to the pool's depth, were never sampled, so they count "
    "with the relevance model's probability recalibrated on the pooled documents that "
    "one group of pooled runs alone brought in (the job's calibration; the topic's "
    "power tuning does not scale it), and its interval adds the model's error on them "
    "to the sampling uncertainty of its pooled documents. Where a top-up sample of its "
    "documents is judged, the judgments correct them instead (unbiased)."
)


@dataclass
class RunDocuments:
    """What one new run retrieved, in the job's topics, by kind."""

    retrieved: int = 0
    pooled: int = 0
    unpooled: int = 0
    below_depth: int = 0
    not_in_collection: int = 0
    topics_outside_job: int = 0
    topics_unjudged: int = 0  # of the job, without a judged document: no estimate


@dataclass
class NewRunsEvaluation:
    """Estimates of the pooled and new runs (None while unpooled documents are
    still being scored), which runs are new, and their documents."""

    estimates: dict[str, RunEstimates] | None
    new: frozenset[str]
    documents: dict[str, RunDocuments]
    progress: UnpooledProgress
    depth: int | None
    rule: str = NOT_IN_COLLECTION_RULE
    note: str = NEW_RUN_NOTE
    pooled_names: tuple[str, ...] = field(default=())
    # The (topic id, document ids) scored or being scored for the new runs.
    wanted: dict[int, list[int]] = field(default_factory=dict)
    # The same, per new run: {run: {(topic id, document id)}}.
    wanted_by_run: dict[str, set[tuple[int, int]]] = field(default_factory=dict)
    # {qid: {docno: cross-fit p}} of the new runs' unpooled documents, once scored.
    unpooled_p: dict[str, dict[str, float]] = field(default_factory=dict)
    # The job's calibration of p outside the pool and each new run's interval parts.
    calibration: Calibration | None = None
    intervals: dict[str, RunInterval] = field(default_factory=dict)
    # The topics each new run's judged top-up sample corrected.
    topped: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Each new run's figures with what a top-up would do.
    figures: dict[str, NewRunFigures] = field(default_factory=dict)


def _pool_run_names(job: MatchJob) -> list[str]:
    pool = _job_pool(job)
    if pool is None:
        return []
    return list(Run.objects.filter(pools=pool).values_list("name", flat=True))


def _job_pool(job: MatchJob):
    if job.pool_id is not None:
        return job.pool
    if job.sample_id is not None:
        return job.sample.pool
    return None


def _document_ids(job: MatchJob, docnos: set[str]) -> dict[str, int]:
    ordered = sorted(docnos)
    found: dict[str, int] = {}
    for start in range(0, len(ordered), LOOKUP_BATCH):
        rows = Document.objects.filter(
            collection_id=job.collection_id,
            docno__in=ordered[start : start + LOOKUP_BATCH],
        ).values_list("docno", "pk")
        found.update(rows)
    return found


def new_runs_evaluate(
    *,
    job: MatchJob,
    sample: Sample,
    new_runs: Mapping[str, Scores],
    pooled_runs: Mapping[str, Scores] | None = None,
    inline_max: int | None = None,
    enqueue: bool = True,
    top_ups: Mapping[str, TopUp] | None = None,
) -> NewRunsEvaluation:
    """Score the unpooled documents of ``new_runs`` (here, or on the workers when
    there are more than ``inline_max``, default ``UNPOOLED_INLINE``) and, once all are scored, estimate them
    beside ``pooled_runs`` (default: the stored runs of the job's pool). A run of
    ``new_runs`` named as a run of the pool is that run (not new); one named as a run
    of ``pooled_runs`` is refused. Without ``enqueue``, documents still unscored are
    only counted (a page polling the batches a first call sent). ``top_ups``: each
    new run's judged top-up sample (None: the stored ones)."""
    if job.status != MatchJob.Status.DONE:
        raise EstimateError(
            f"job {job.pk} is {job.status}; evaluate against a finished job"
        )
    pooled = dict(job_pool_runs(job) if pooled_runs is None else pooled_runs)
    clash = sorted(set(pooled) & set(new_runs))
    if clash:
        raise EstimateError(
            f"run {clash[0]} is already in the pool of job {job.pk}: give the new run "
            "another tag"
        )
    job_qids = set(job.topics.values_list("qid", flat=True))
    for name, run in new_runs.items():
        new_run_check(job=job, name=name, scores=run, qids=job_qids)
    pool_names = set(_pool_run_names(job))
    crossfit, features, qids = job_crossfit_fit(job=job, sample=sample)
    # Topics without a judged document have no p: the job cannot estimate them.
    topic_of = {qids[t]: t for t in features}
    pool = _job_pool(job)
    depth = pool.depth if pool is not None else None
    in_job = {t: set(ids.tolist()) for t, (ids, _) in features.items()}
    wanted_docnos = {
        d for run in new_runs.values() for docs in run.values() for d in docs
    }
    doc_id = _document_ids(job, wanted_docnos)
    documents, wanted, by_run = _run_documents(
        new_runs,
        topic_of=topic_of,
        job_qids=job_qids,
        doc_id=doc_id,
        in_job=in_job,
        depth=depth,
    )
    wanted_lists = {t: sorted(d) for t, d in wanted.items()}
    progress = unpooled_ensure(
        job=job,
        wanted=wanted_lists,
        inline_max=UNPOOLED_INLINE if inline_max is None else inline_max,
        enqueue=enqueue,
    )
    result = NewRunsEvaluation(
        None,
        frozenset(set(new_runs) - pool_names),
        documents,
        progress,
        depth,
        pooled_names=tuple(sorted(pooled)),
        wanted=wanted_lists,
        wanted_by_run=by_run,
    )
    if not progress.done:
        return result
    probs = crossfit_by_docno(crossfit, _docnos(job, features, qids))
    # The columns the job's model reads: with the semantic ones where its fit had them.
    semantic = any(m.shape[1] > len(FEATURE_NAMES) for _, m in features.values())
    extra = unpooled_features(job=job, wanted=wanted_lists, semantic=semantic)
    unsampled = _unpooled_p(crossfit, features, extra, qids, doc_id)
    result.unpooled_p = unsampled
    inputs = EstimateInputs(
        prels=sample_prels(sample),
        probs=probs,
        design=sample_design(sample=sample),
        level=job.relevance_level,
    )
    result.estimates = _estimates(
        job,
        inputs,
        pooled,
        new_runs,
        unsampled,
        depth,
        result,
        stored_top_ups(job=job, names=list(new_runs)) if top_ups is None else top_ups,
    )
    return result


def _unpooled_p(crossfit, features, extra, qids, doc_id) -> dict[str, dict[str, float]]:
    """The cross-fitted model's p of the unpooled documents ``{qid: {docno: p}}``,
    read with the pool's fold models from their ``extra`` features."""
    names = {pk: d for d, pk in doc_id.items()}
    topic_of = {qids[t]: t for t in features}
    pool_x = {qids[t]: m for t, (_, m) in features.items()}
    extra_x = {qids[t]: m for t, (_, m) in extra.items()}
    unsampled: dict[str, dict[str, float]] = {}
    for qid, p in crossfit_beside_pool(crossfit, pool_x, extra_x).items():
        ids = extra[topic_of[qid]][0]
        unsampled[qid] = {
            names[pk]: float(v) for pk, v in zip(ids, p.tolist(), strict=True)
        }
    return unsampled


def _run_documents(
    new_runs: Mapping[str, Scores],
    *,
    topic_of: Mapping[str, int],
    job_qids: set[str],
    doc_id: Mapping[str, int],
    in_job: Mapping[int, set[int]],
    depth: int | None,
) -> tuple[
    dict[str, RunDocuments], dict[int, set[int]], dict[str, set[tuple[int, int]]]
]:
    """Each new run's documents counted (pooled, unpooled, below depth, not in the
    collection; topics unjudged or outside the job), the unpooled ones to score per
    topic, and per run its (topic, document) pairs among them."""
    documents: dict[str, RunDocuments] = {}
    wanted: dict[int, set[int]] = {}
    by_run: dict[str, set[tuple[int, int]]] = {}
    for name, run in new_runs.items():
        counts = documents.setdefault(name, RunDocuments())
        for qid, docs in run.items():
            topic = topic_of.get(qid)
            if topic is None:
                if qid in job_qids:
                    counts.topics_unjudged += 1
                else:
                    counts.topics_outside_job += 1
                continue
            for rank, docno in enumerate(ranking_order(docs), start=1):
                counts.retrieved += 1
                pk = doc_id.get(docno)
                if pk is None:
                    counts.not_in_collection += 1
                elif pk in in_job[topic]:
                    counts.pooled += 1
                elif depth is not None and rank > depth:
                    counts.below_depth += 1
                else:
                    counts.unpooled += 1
                    wanted.setdefault(topic, set()).add(pk)
                    by_run.setdefault(name, set()).add((topic, pk))
    return documents, wanted, by_run


def _estimates(
    job: MatchJob,
    inputs: EstimateInputs,
    pooled: Mapping[str, Scores],
    new_runs: Mapping[str, Scores],
    unsampled: Mapping[str, Mapping[str, float]],
    depth: int | None,
    result: NewRunsEvaluation,
    top_ups: Mapping[str, TopUp],
) -> dict[str, RunEstimates]:
    """The pooled runs as the runs page shows them (the pool's estimand, untouched by
    the new runs), and each new run with its own unpooled documents added to the pool
    P (calibrated p, or corrected by its judged top-up sample) and its bias check
    against the pooled runs' shift: the same figure alone or beside other new runs.
    Fills ``result``'s calibration and interval parts."""
    prels, probs, design, level = (
        inputs.prels,
        inputs.probs,
        inputs.design,
        inputs.level,
    )
    pool_runs = job_pool_runs(job)
    reference = pooled_estimates(
        job=job, prels=prels, probs=probs, design=design, pooled=pool_runs
    )
    shift = bias_shift([e.check for e in reference.values()]) if reference else None
    out = {n: reference[n] for n in pooled if n in reference}
    if len(out) < len(pooled):
        out.update(
            runs_model_assisted(
                prels=prels,
                probs=probs,
                runs=pooled,
                level=level,
                shift=shift,
                design=design,
            )
        )
    fresh = {n: r for n, r in new_runs.items() if n not in reference}
    out.update({n: reference[n] for n in new_runs if n in reference})
    if fresh:
        result.calibration = job_calibration(
            prels=prels,
            probs=probs,
            pooled=pool_runs or pooled,
            depth=depth,
            level=level,
        )
    for name, run in fresh.items():
        assert result.calibration is not None
        figures = new_run_estimates(
            name=name,
            run=run,
            inputs=inputs,
            unpooled_p=unsampled,
            depth=depth,
            calibration=result.calibration,
            shift=shift,
            top_up=top_ups.get(name),
        )
        out[name] = figures.estimates
        result.intervals[name] = figures.interval
        result.figures[name] = figures
        if figures.topped_topics:
            result.topped[name] = figures.topped_topics
    return dict(sorted(out.items()))


def _docnos(job: MatchJob, features, qids: Mapping[int, str]) -> dict[str, list[str]]:
    ids = {int(d) for doc_ids, _ in features.values() for d in doc_ids.tolist()}
    names: dict[int, str] = {}
    ordered = sorted(ids)
    for start in range(0, len(ordered), LOOKUP_BATCH):
        names.update(
            Document.objects.filter(
                pk__in=ordered[start : start + LOOKUP_BATCH]
            ).values_list("pk", "docno")
        )
    return {
        qids[t]: [names[int(d)] for d in doc_ids]
        for t, (doc_ids, _) in features.items()
    }


# The counts evaluate prints per run (integers), in order.
NEW_RUN_COUNTS = (
    "pooled", "docs_retrieved", "docs_pooled", "docs_unpooled", "docs_below_depth",
    "docs_not_in_collection", "topics_outside_job", "topics_unjudged",
)  # fmt: skip


def new_run_rows(
    evaluation: NewRunsEvaluation, name: str
) -> Iterator[tuple[str, str, float]]:
    """``(measure, "all", value)`` rows of :data:`NEW_RUN_COUNTS` for one run:
    ``pooled`` is 1 for a run of the pool, 0 for a new one; for a new run, its
    interval's variance parts (``ma_var_sampling``, ``ma_var_model``), the unpooled
    documents counted by the model alone and their calibrated count of relevant
    ones, the topics its judged top-up corrected and the job's calibration ratio."""
    counts = evaluation.documents.get(name, RunDocuments())
    values = (
        float(name not in evaluation.new), counts.retrieved, counts.pooled,
        counts.unpooled, counts.below_depth, counts.not_in_collection,
        counts.topics_outside_job, counts.topics_unjudged,
    )  # fmt: skip
    for measure, value in zip(NEW_RUN_COUNTS, values, strict=True):
        yield measure, "all", float(value)
    figures = evaluation.figures.get(name)
    if figures is not None:
        parts = figures.interval
        yield "ma_var_sampling", "all", parts.var_sampling
        yield "ma_var_model", "all", parts.var_model
        yield "docs_model_alone", "all", float(parts.documents)
        yield "docs_model_alone_relevant", "all", parts.expected_relevant
        yield "top_up_topics", "all", float(len(figures.topped_topics))
    if evaluation.calibration is not None and name in evaluation.new:
        yield "calibration_ratio", "all", evaluation.calibration.ratio


def new_runs_wait(
    *,
    job: MatchJob,
    sample: Sample,
    runs: Mapping[str, Scores],
    say: Callable[[str], None],
    timeout: float = 3600.0,
    poll: float = 1.0,
) -> NewRunsEvaluation:
    """:func:`new_runs_evaluate` of ``runs`` alone (no pooled runs beside), waiting
    for the workers to score the unpooled documents (for commands)."""
    found = new_runs_evaluate(job=job, sample=sample, new_runs=runs, pooled_runs={})
    deadline = time.monotonic() + timeout
    wanted = found.wanted
    while found.estimates is None:
        progress = unpooled_progress(job=job, wanted=wanted)
        say(f"scoring unpooled documents: {progress.scored}/{progress.wanted}")
        if progress.done:
            return new_runs_evaluate(
                job=job, sample=sample, new_runs=runs, pooled_runs={}
            )
        if time.monotonic() > deadline:
            raise EstimateError(
                f"unpooled documents of job {job.pk} still not scored after "
                f"{timeout:.0f} s: is a worker running?"
            )
        time.sleep(poll)
    return found


def new_run_check(
    *, job: MatchJob, name: str, scores: Scores, qids: set[str] | None = None
) -> None:
    """Refuse a run that answers none of the job's topics (nothing to compare)."""
    qids = set(job.topics.values_list("qid", flat=True)) if qids is None else qids
    if not set(scores) & qids:
        mine = ", ".join(sorted(scores, key=topic_key)[:5]) or "none"
        raise EstimateError(
            f"run {name} answers none of the {len(qids)} topics of job {job.pk} (its "
            f"topics: {mine}{', ...' if len(scores) > 5 else ''}): it cannot be "
            "compared with the pooled runs"
        )


def new_run_keep(
    *, job: MatchJob, sample: Sample, name: str, scores: Scores, user=None
) -> JobNewRun:
    """Keep a run evaluated against ``job`` as new (replacing one of the same name),
    so the job page lists it and the runs page shows it beside the pooled runs; a
    run answering none of the job's topics is refused (:func:`new_run_check`)."""
    new_run_check(job=job, name=name, scores=scores)
    if name in job_pool_runs(job):
        raise EstimateError(
            f"run {name} is already in the pool of job {job.pk}: give the new run "
            "another tag"
        )
    kept, _ = JobNewRun.objects.update_or_create(
        job=job,
        name=name,
        defaults={
            "scores": {q: dict(d) for q, d in scores.items()},
            "sample": sample,
            "created_by": user if user is not None and user.is_authenticated else None,
        },
    )
    return kept


def kept_new_runs(job: MatchJob) -> dict[str, Scores]:
    """The runs kept as new runs of ``job``, by name."""
    return dict(JobNewRun.objects.filter(job=job).values_list("name", "scores"))


def job_runs_estimates(
    *, job: MatchJob, sample: Sample, runs: Mapping[str, Scores] | None = None
) -> tuple[dict[str, RunEstimates], frozenset[str], list[str]]:
    """The estimates the runs page shows for a job: its pooled runs, and as new runs
    (as the new-run page gives them) its kept new runs and the other ``runs`` (runs of
    the collection that did not build the job's pool), with their unpooled documents
    already scored: nothing is sent to the workers here. Also which runs are new, and
    those still waiting for their documents to be scored (shown without a figure)."""
    found, new, pending = job_runs_evaluation(job=job, sample=sample, runs=runs)
    return found.estimates or {}, new, pending


def job_runs_evaluation(
    *, job: MatchJob, sample: Sample, runs: Mapping[str, Scores] | None = None
) -> tuple[NewRunsEvaluation, frozenset[str], list[str]]:
    """:func:`job_runs_estimates` with the whole evaluation (the new runs' interval
    parts and top-ups)."""
    pooled = job_pool_runs(job)
    others = {n: s for n, s in (runs or {}).items() if n not in pooled}
    new = {**kept_new_runs(job), **others}
    found = new_runs_evaluate(
        job=job,
        sample=sample,
        new_runs=new,
        pooled_runs=pooled,
        inline_max=0,
        enqueue=False,
    )
    if found.estimates is not None:
        return found, frozenset(new), []
    scored = set(
        UnpooledScore.objects.filter(
            job=job, topic_id__in=list(found.wanted)
        ).values_list("topic_id", "document_id")
    )
    ready = {
        name: run
        for name, run in new.items()
        if found.wanted_by_run.get(name, set()) <= scored
    }
    found = new_runs_evaluate(
        job=job,
        sample=sample,
        new_runs=ready,
        pooled_runs=pooled,
        inline_max=0,
        enqueue=False,
    )
    return found, frozenset(ready), sorted(set(new) - set(ready))


def runs_page_context(job, evaluation: NewRunsEvaluation, new: Iterable[str]) -> dict:
    """What the runs page says beside the model-assisted table: the job it shows
    (and the other jobs with kept new runs), each flagged run's reason (a new run's
    pointing at the top-up), the advice for new runs counted by the model alone and
    the new runs averaged over fewer topics."""
    found = evaluation.estimates or {}
    reasons = flag_reasons(found)
    for name, figures in evaluation.figures.items():
        if name in reasons:
            reasons[name] = new_run_flag_reason(figures, reasons[name])
    others = (
        JobNewRun.objects.filter(job__collection_id=job.collection_id)
        .exclude(job=job)
        .values_list("job_id")
        .annotate(n=Count("pk"))
        .order_by("job_id")
    )
    return {
        "model_assisted_job": f"job {job.pk}" + (f" ({job.name})" if job.name else ""),
        "model_assisted_flagged": reasons,
        "new_run_advice": {
            name: text
            for name, figures in sorted(evaluation.figures.items())
            if (text := top_up_advice(figures, job_id=job.pk, run=name))
        },
        "fewer_topics": fewer_topics(found, new),
        "other_jobs_new_runs": [[pk, n] for pk, n in others],
    }
