"""Model-assisted estimates of runs from a matching job's relevance model and a sample.

The estimate (:mod:`nuggets_app.ir.model_assisted`, bounded per topic) needs the
statAP sample's judgments with their inclusion probabilities (prels) and, for every
pooled document, a probability of relevance from a model that did not see that topic's
labels. :func:`job_crossfit` refits the job's model on the other topic folds
(:func:`nuggets_app.learning.crossfit.crossfit_predict`): the features stored with the job's
chunks, the judgments of now as labels, the C of the job's stored fit, and the weights
and anchoring of the estimate's sample (1/π of its drawn documents; anchored to its
Horvitz-Thompson estimate of the relevant pooled documents when all of them are
judged), so that p is calibrated for the pool that sample stands for, as the
simulation's model is. It reads no text; five small logistic fits over the judged
rows, so it is computed when asked (the dashboard keeps its page result).

Beside the estimate, :func:`runs_model_assisted` gives the bias check of each run
(EAP under the cross-fitted p against statAP, over the topics valid for both, once
the ratio common to every run is removed): ``flagged`` when the 95% interval of
``EAP - shift * statAP`` excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.selectors import run_scores, sample_prels
from nuggets_app.evaluation.services.diagnostics import Table
from nuggets_app.inference.services.job_model import (
    fit_data,
    fit_sample,
    stored_semantic,
)
from nuggets_app.ir.bias_check import BiasCheck, bias_check, bias_shift
from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.intervals import judgments_to_narrow
from nuggets_app.ir.model_assisted import CUTOFF, model_assisted_evaluate
from nuggets_app.ir.prels import TopicPrels, topic_key
from nuggets_app.ir.run_intervals import RunEstimate
from nuggets_app.learning.crossfit import (
    CrossFit,
    crossfit_by_docno,
    crossfit_predict,
)
from nuggets_app.learning.relevance_model import model_fit
from nuggets_app.models import Document, JobInference, MatchJob, Run, Sample
from nuggets_app.pooling.selectors import sample_design

Scores = Mapping[str, Mapping[str, float]]
# The measures printed and shown, in order (names of ir.model_assisted).
MEASURES = ("AP", f"P@{CUTOFF}", "Rprec")

INTERVAL_NOTE = (
    "The 95% interval covers the uncertainty of which documents were sampled for "
    "judging, given the model: over repeated samples of the same pools about 95% of "
    "such intervals contain the value full judgments of the pooled documents would "
    "give (unpooled documents count as non-relevant); where a topic's sample put its "
    "estimated number of relevant documents below those it judged, the interval also "
    "spans MAP without the ratio correction on that topic. It does not cover assessor "
    "disagreement or the choice of topics."
)
FLAG_NOTE = (
    "A bias flag means that, relative to the job's pooled runs, the relevance model alone "
    "(EAP) credits this run more (bias_diff > 0) or less (< 0) than the judged sample "
    "alone (statAP) supports, by more than sampling explains (bias_diff = EAP - "
    "shift x statMAP, shift = the ratio of EAP to statMAP common to the pooled runs): "
    "the "
    "model over- or under-rates the documents this run retrieves, so EAP would be "
    "unfair to it; the model-assisted estimate corrects for that with the sample."
)

# One line per flagged run, in plain words: the pages and the commands share it.
FLAG_REASONS = {
    "over": "the model alone over-rates the documents this run retrieves, compared "
    "with the pooled runs; trust the model-assisted figure, not EAP",
    "under": "the model alone under-rates the documents this run retrieves, compared "
    "with the pooled runs; trust the model-assisted figure, not EAP",
}


def flag_reason(check: BiasCheck) -> str:
    """Why the run is flagged, in one line of plain words ("" when it is not):
    ``diff > 0`` means the model credits it above the pooled runs, relative to the
    sample."""
    if not check.flagged:
        return ""
    return FLAG_REASONS["over" if check.diff > 0 else "under"]


def flag_reasons(estimates: Mapping[str, RunEstimates]) -> dict[str, str]:
    """The flagged runs' reasons, by run name."""
    return {
        name: flag_reason(e.check)
        for name, e in sorted(estimates.items())
        if e.check.flagged
    }


MODEL_ONLY_NOTE = (
    "In these topics no judged document of the sample is relevant: their estimates "
    "rest on the relevance model alone, since the sample shows no error of the model "
    "there. Their intervals are therefore as wide as a value between 0 and 1 can need "
    "(a variance of 1/4 per topic, counted in every run's interval and in its "
    "model_only column), not narrow. To narrow them, judge about the number of "
    "documents in brackets for that topic in all (a later round, or a larger "
    "sample): a sample that size is expected to hold three relevant documents, "
    "under the model."
)


def topics_without_relevant(prels: Mapping[str, TopicPrels], level: int) -> list[str]:
    """The sample's topics (statAP's ``UMASS`` ones aside) where no judged document
    reaches ``level``: :data:`MODEL_ONLY_NOTE` says what that means for them."""
    return sorted(
        (
            qid
            for qid, topic in prels.items()
            if topic.label != "UMASS"
            and not any(rel >= level for rel in topic.rel.values())
        ),
        key=topic_key,
    )


def model_only_topics(
    *,
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    level: int,
    design: Mapping[str, Mapping[str, float]] | None = None,
) -> list[str]:
    """``"qid (about N judged)"`` for every topic of :func:`topics_without_relevant`:
    the judged documents it needs in all
    (:func:`nuggets_app.ir.intervals.judgments_to_narrow` with the model's p of the
    judged documents; capped at the pool, known from ``design``; ``all`` when the
    model expects no relevant document there)."""
    design = design or {}
    out = []
    for qid in topics_without_relevant(prels, level):
        judged = [d for d, pi in prels[qid].inclusion_prob.items() if pi > 0]
        p = probs.get(qid, {})
        pool = len(design[qid]) if design.get(qid) else None
        needed = judgments_to_narrow(
            len(judged), math.fsum(p.get(d, 0.0) for d in judged), pool
        )
        out.append(f"{qid} (about {needed if needed else 'all'} judged)")
    return out


class EstimateError(DomainError):
    """No estimate can be made as asked; the message says why."""


@dataclass(frozen=True)
class EstimateInputs:
    """What a job's runs are estimated from: the sample's prels, the job's
    cross-fitted p of the pooled documents, π of every pooled document (the sample's
    design) and the job's relevance level."""

    prels: Mapping[str, TopicPrels]
    probs: Mapping[str, Mapping[str, float]]
    design: Mapping[str, Mapping[str, float]]
    level: int


@dataclass(frozen=True)
class RunEstimates:
    """One run: the model-assisted estimates (``AP``, ``P@30``, ``Rprec``) and the
    bias check."""

    name: str
    measures: dict[str, RunEstimate]
    check: BiasCheck

    @property
    def ap(self) -> RunEstimate:
        return self.measures["AP"]


def job_crossfit(
    *, job: MatchJob, sample: Sample | None = None, ablate: Sequence[str] | None = None
) -> dict[str, dict[str, float]]:
    """``{qid: {docno: p}}``: the job's model refitted on the other topic folds for
    every topic (topics whose fold cannot be fitted are absent: p ≡ 0 there).

    Weights and anchoring follow ``sample`` when given (the sample the estimate
    uses: 1/π of its drawn documents, anchored to its Horvitz-Thompson estimate when
    every drawn document is judged), else the job's own sample, as the job's fit.
    ``ablate``: feature families left out (:func:`job_crossfit_fit`; None: those
    the job's fit left out, () every feature).
    """
    result, features, qids = job_crossfit_fit(job=job, sample=sample, ablate=ablate)
    doc_ids = {int(d) for ids, _ in features.values() for d in ids.tolist()}
    names = dict(Document.objects.filter(pk__in=doc_ids).values_list("pk", "docno"))
    docnos = {qids[t]: [names[int(d)] for d in features[t][0]] for t in features}
    return crossfit_by_docno(result, docnos)


def job_crossfit_fit(
    *, job: MatchJob, sample: Sample | None = None, ablate: Sequence[str] | None = None
) -> tuple[CrossFit, dict[int, tuple[np.ndarray, np.ndarray]], dict[int, str]]:
    """The cross-fit of :func:`job_crossfit` with the job's raw features ``{topic id:
    (document ids, matrix)}`` of its judged topics and ``{topic id: qid}`` (to score
    documents beside the pool with the fold models). ``ablate``: feature families
    left out of every fold's fit, with the inverse L2 strength chosen for the
    features left (a full fit without them) instead of the stored fit's."""
    stored = JobInference.objects.filter(job=job, model__isnull=False).first()
    if stored is None:
        raise EstimateError(
            f"job {job.pk} has no fitted relevance model (fit it first)"
        )
    # The columns of the job's own fit: the semantic features where it used them.
    fit = fit_data(
        job, sample or stored.fit_sample, semantic=stored_semantic(stored.model)
    )
    c = float(stored.model["c"])
    fitted_without = tuple(stored.model.get("ablate", ()))
    if ablate is None:
        # The job's own model: left without the families its fit left out (its
        # nugget choice, or an ablation asked for).
        ablate = fitted_without
    elif tuple(ablate) != fitted_without:
        c = model_fit(
            fit.rows,
            weights=fit.weights,
            ablate=ablate,
            feature_names=fit.feature_names,
        ).c
    result = crossfit_predict(
        fit.rows,
        weights=fit.weights,
        c=c,
        anchored=fit.pool_relevant is not None,
        ablate=ablate,
        feature_names=fit.feature_names,
    )
    return result, fit.features, fit.qids


def estimate_sample(job: MatchJob, name: str | None = None) -> Sample | None:
    """The sample whose judgments the estimate uses: ``name`` among the samples of
    the job's pool, else the sample the job's model was fitted with, else
    :func:`~nuggets_app.inference.services.job_model.fit_sample`; None without one."""
    if name is not None:
        pool_id = job.pool_id or (job.sample.pool_id if job.sample_id else None)
        found = (
            Sample.objects.filter(pool_id=pool_id, name=name)
            .exclude(method__in=Sample.NOT_STATAP)
            .first()
        )
        if found is None:
            raise EstimateError(f"no sample {name!r} in the pool of job {job.pk}")
        return found
    stored = JobInference.objects.filter(job=job).select_related("fit_sample").first()
    if stored is not None and stored.fit_sample is not None:
        return stored.fit_sample
    return fit_sample(job)


def runs_model_assisted(
    *,
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    runs: Mapping[str, Scores],
    level: int,
    unsampled: Mapping[str, Mapping[str, float]] | None = None,
    shift: float | None = None,
    design: Mapping[str, Mapping[str, float]] | None = None,
    estimator: Estimator = REPORTED,
) -> dict[str, RunEstimates]:
    """Every run's model-assisted estimates by ``estimator`` (default: the reported
    one, per topic bounded to [0, 1]) and bias check, by run name; ``unsampled``: p
    of new runs' unpooled documents; ``shift``: the bias check's shift of the job's
    pooled runs (None: of ``runs``); ``design``: π of every pooled document (the
    interval's, :mod:`nuggets_app.ir.intervals`)."""
    plain = {n: {q: dict(d) for q, d in s.items()} for n, s in runs.items()}
    found = model_assisted_evaluate(
        prels,
        probs,
        plain,
        estimator=estimator,
        level=level,
        unsampled=unsampled,
        design=design,
    )
    checked = bias_check(
        prels,
        probs,
        plain,
        estimator=estimator,
        level=level,
        unsampled=unsampled,
        design=design,
        shift=shift,
    )
    checks = {c.run: c for c in checked}
    return {
        name: RunEstimates(name, {m: found[name][m] for m in MEASURES}, checks[name])
        for name in sorted(runs)
    }


def estimate_rows(
    estimates: RunEstimates, *, per_topic: bool = True
) -> Iterator[tuple[str, str, float]]:
    """``(measure, topic, value)`` rows for ``evaluate``: per measure ``ma<M>`` (per
    topic, then ``all``) and its ``_ci_low``/``_ci_high``; ``ma_topics`` and
    ``ma_model_only`` (those resting on the model alone); the bias
    check's ``statMAP``, ``EAP_check`` (EAP under the cross-fitted p, same topics),
    ``bias_shift`` (the EAP/statMAP ratio common to all runs), ``bias_diff`` (EAP -
    shift x statMAP) with its interval and ``bias_flag`` (1 or 0)."""
    for measure, est in estimates.measures.items():
        if per_topic:
            for topic in est.topics:
                yield f"ma{measure}", topic.qid, topic.estimate
        yield f"ma{measure}", "all", est.estimate
        yield f"ma{measure}_ci_low", "all", est.ci95[0]
        yield f"ma{measure}_ci_high", "all", est.ci95[1]
    check = estimates.check
    yield "ma_topics", "all", float(estimates.ap.n_topics)
    yield "ma_model_only", "all", float(estimates.ap.n_model_only)
    yield "statMAP", "all", check.statap
    yield "EAP_check", "all", check.eap
    yield "bias_shift", "all", check.shift
    yield "bias_diff", "all", check.diff
    yield "bias_diff_ci_low", "all", check.ci95[0]
    yield "bias_diff_ci_high", "all", check.ci95[1]
    yield "bias_flag", "all", float(check.flagged)


ESTIMATE_COLUMNS = (
    "run", "pool", "maAP", "ci_low", "ci_high", "topics", "model_only", "statMAP",
    "EAP_check", "bias_diff", "bias_diff_ci_low", "bias_diff_ci_high", "bias_flag",
    "reason",
)  # fmt: skip


def estimates_table(
    estimates: Mapping[str, RunEstimates], new: Iterable[str] = ()
) -> Table:
    """Per run, by model-assisted MAP (highest first): ``pooled`` or ``new`` (in
    ``new``: evaluated as a new run), the estimate, its 95% interval, the topics
    averaged and those of them resting on the model alone, statMAP and EAP_check (EAP
    under the cross-fitted model, over the topics valid for both; the evaluate
    command prints the same name), their difference with its interval, ``flagged`` or
    ``no``, and the flag's reason in words."""
    fresh = set(new)
    ranked = sorted(estimates.values(), key=lambda e: (-_key(e.ap.estimate), e.name))
    rows = [
        (e.name, "new" if e.name in fresh else "pooled", e.ap.estimate, *e.ap.ci95,
         e.ap.n_topics, e.ap.n_model_only, e.check.statap, e.check.eap, e.check.diff,
         *e.check.ci95, "flagged" if e.check.flagged else "no", flag_reason(e.check))
        for e in ranked
    ]  # fmt: skip
    return Table("model_assisted", ESTIMATE_COLUMNS, rows)


def _key(value: float) -> float:
    return value if value == value else -math.inf


def job_pool_runs(job: MatchJob) -> dict[str, Scores]:
    """The stored runs of the job's pool, by name."""
    pool = job.pool if job.pool_id is not None else None
    if pool is None and job.sample_id is not None:
        pool = job.sample.pool
    if pool is None:
        return {}
    return {run.name: run_scores(run) for run in Run.objects.filter(pools=pool)}


def pooled_estimates(
    *,
    job: MatchJob,
    prels: Mapping[str, TopicPrels],
    probs: Scores,
    design: Mapping[str, Mapping[str, float]] | None = None,
    pooled: Mapping[str, Scores] | None = None,
) -> dict[str, RunEstimates]:
    """The estimates of the job's pooled runs (``pooled``, read when not given), as
    the runs page shows them: the reference of every run's bias check (their
    shift)."""
    return runs_model_assisted(
        prels=prels,
        probs=probs,
        runs=job_pool_runs(job) if pooled is None else pooled,
        level=job.relevance_level,
        design=design,
    )


def job_sample_estimates(
    *,
    job: MatchJob,
    sample: Sample,
    runs: Mapping[str, Scores],
    probs: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, RunEstimates]:
    """:func:`runs_model_assisted` with the sample's prels, the job's cross-fitted
    p (``probs`` when the caller has it) and the sample's design, at the job's
    relevance level; the bias check relative to the job's pooled runs, so a run gets
    the same verdict alone or beside others."""
    prels = sample_prels(sample)
    probs = job_crossfit(job=job, sample=sample) if probs is None else probs
    design = sample_design(sample=sample)
    pooled = job_pool_runs(job)
    reference = pooled_estimates(
        job=job, prels=prels, probs=probs, design=design, pooled=pooled
    )
    # A pooled run asked for is the reference's own figure (computed once).
    out = {n: reference[n] for n, run in runs.items() if pooled.get(n) == run}
    rest = {n: run for n, run in runs.items() if n not in out}
    if rest:
        out.update(
            runs_model_assisted(
                prels=prels,
                probs=probs,
                runs=rest,
                level=job.relevance_level,
                shift=bias_shift([e.check for e in reference.values()])
                if reference
                else None,
                design=design,
            )
        )
    return dict(sorted(out.items()))


def job_model_only_topics(
    *,
    job: MatchJob,
    sample: Sample,
    probs: Mapping[str, Mapping[str, float]] | None = None,
) -> list[str]:
    """:func:`model_only_topics` of the sample, with the job's cross-fitted p
    (``probs`` when the caller has it)."""
    prels = sample_prels(sample)
    level = job.relevance_level
    if not topics_without_relevant(prels, level):
        return []
    return model_only_topics(
        prels=prels,
        probs=job_crossfit(job=job, sample=sample) if probs is None else probs,
        level=level,
        design=sample_design(sample=sample),
    )
