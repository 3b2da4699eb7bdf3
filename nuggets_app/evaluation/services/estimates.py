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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.evaluation.services.diagnostics import Table
from nuggets_app.inference.services.job_model import (
    _labels,
    _sample_weights,
    job_features,
    sample_fully_judged,
)
from nuggets_app.ir.bias_check import BiasCheck, bias_check
from nuggets_app.ir.model_assisted import (
    CUTOFF,
    REPORTED,
    RunEstimate,
    model_assisted_evaluate,
)
from nuggets_app.ir.prels import TopicPrels, topic_key
from nuggets_app.learning.crossfit import (
    CrossFit,
    crossfit_by_docno,
    crossfit_predict,
)
from nuggets_app.learning.relevance_model import model_fit
from nuggets_app.models import Document, JobInference, MatchJob, Sample, Topic

Scores = Mapping[str, Mapping[str, float]]
# The measures printed and shown, in order (names of ir.model_assisted).
MEASURES = ("AP", f"P@{CUTOFF}", "Rprec")

INTERVAL_NOTE = (
    "The 95% interval covers the uncertainty of which documents were sampled for "
    "judging, given the model: over repeated samples of the same pools about 95% of "
    "such intervals contain the value full judgments of the pooled documents would "
    "give (unpooled documents count as non-relevant); it does not cover assessor "
    "disagreement or the choice of topics."
)
FLAG_NOTE = (
    "A bias flag means that, relative to the other runs, the relevance model alone "
    "(EAP) credits this run more (bias_diff > 0) or less (< 0) than the judged sample "
    "alone (statAP) supports, by more than sampling explains (bias_diff = EAP - "
    "shift x statMAP, shift = the ratio of EAP to statMAP common to all runs): the "
    "model over- or under-rates the documents this run retrieves, so EAP would be "
    "unfair to it; the model-assisted estimate corrects for that with the sample."
)


MODEL_ONLY_NOTE = (
    "In these topics no judged document of the sample is relevant: their estimates "
    "rest on the relevance model alone, and their intervals are too narrow, since the "
    "sample shows no error of the model there. Judge more of their documents (a "
    "later round, or a larger sample) before trusting them."
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


class EstimateError(ValueError):
    """No estimate can be made as asked; the message says why."""


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
    *, job: MatchJob, sample: Sample | None = None, ablate: Sequence[str] = ()
) -> dict[str, dict[str, float]]:
    """``{qid: {docno: p}}``: the job's model refitted on the other topic folds for
    every topic (topics whose fold cannot be fitted are absent: p ≡ 0 there).

    Weights and anchoring follow ``sample`` when given (the sample the estimate
    uses: 1/π of its drawn documents, anchored to its Horvitz-Thompson estimate when
    every drawn document is judged), else the job's own sample, as the job's fit.
    ``ablate``: feature families left out (:func:`job_crossfit_fit`).
    """
    result, features, qids = job_crossfit_fit(job=job, sample=sample, ablate=ablate)
    doc_ids = {int(d) for ids, _ in features.values() for d in ids.tolist()}
    names = dict(Document.objects.filter(pk__in=doc_ids).values_list("pk", "docno"))
    docnos = {qids[t]: [names[int(d)] for d in features[t][0]] for t in features}
    return crossfit_by_docno(result, docnos)


def job_crossfit_fit(
    *, job: MatchJob, sample: Sample | None = None, ablate: Sequence[str] = ()
) -> tuple[CrossFit, dict[int, tuple[np.ndarray, np.ndarray]], dict[int, str]]:
    """The cross-fit of :func:`job_crossfit` with the job's raw features ``{topic id:
    (document ids, matrix)}`` and ``{topic id: qid}`` (to score documents beside the
    pool with the fold models). ``ablate``: feature families left out of every fold's
    fit, with the inverse L2 strength chosen for the features left (a full fit
    without them) instead of the stored fit's."""
    stored = JobInference.objects.filter(job=job, model__isnull=False).first()
    if stored is None:
        raise EstimateError(
            f"job {job.pk} has no fitted relevance model (fit it: manage.py match "
            f"--fit {job.pk})"
        )
    features = job_features(job)
    labels = _labels(job, features)
    qids = dict(Topic.objects.filter(pk__in=list(features)).values_list("pk", "qid"))
    data = {qids[t]: (features[t][1], labels[t]) for t in features}
    weighted = job if sample is None else _with_sample(job, sample)
    weights = _sample_weights(weighted, features, qids)
    anchored = weights is not None and sample_fully_judged(weighted, features, labels)
    c = float(stored.model["c"])
    if ablate:
        c = model_fit(data, weights=weights, ablate=ablate).c
    result = crossfit_predict(
        data, weights=weights, c=c, anchored=anchored, ablate=ablate
    )
    return result, features, qids


def _with_sample(job: MatchJob, sample: Sample) -> MatchJob:
    """The job as the weight helpers read it (``sample_id``), over ``sample``; an
    unsaved copy."""
    copy = MatchJob(pk=job.pk, collection_id=job.collection_id, sample_id=sample.pk)
    return copy


def estimate_sample(job: MatchJob, name: str | None = None) -> Sample | None:
    """The sample whose judgments the estimate uses: ``name`` among the samples of
    the job's pool, else the job's own sample, else the newest sample of the job's
    pool (verification samples excluded); None without one."""
    pool_id = job.pool_id or (job.sample.pool_id if job.sample_id else None)
    samples = Sample.objects.filter(pool_id=pool_id).exclude(
        method=Sample.Method.VERIFICATION
    )
    if name is not None:
        found = samples.filter(name=name).first()
        if found is None:
            raise EstimateError(f"no sample {name!r} in the pool of job {job.pk}")
        return found
    if job.sample_id is not None:
        return job.sample
    return samples.order_by("-pk").first()


def runs_model_assisted(
    *,
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    runs: Mapping[str, Scores],
    level: int,
    unsampled: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, RunEstimates]:
    """Every run's model-assisted estimates (per topic bounded to [0, 1]) and bias
    check, by run name; ``unsampled``: p of new runs' unpooled documents."""
    plain = {n: {q: dict(d) for q, d in s.items()} for n, s in runs.items()}
    common = {"level": level, "unsampled": unsampled, **REPORTED}
    found = model_assisted_evaluate(prels, probs, plain, **common)
    checks = {c.run: c for c in bias_check(prels, probs, plain, **common)}
    return {
        name: RunEstimates(name, {m: found[name][m] for m in MEASURES}, checks[name])
        for name in sorted(runs)
    }


def estimate_rows(
    estimates: RunEstimates, *, per_topic: bool = True
) -> Iterator[tuple[str, str, float]]:
    """``(measure, topic, value)`` rows for ``evaluate``: per measure ``ma<M>`` (per
    topic, then ``all``) and its ``_ci_low``/``_ci_high``; ``ma_topics``; the bias
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
    yield "statMAP", "all", check.statap
    yield "EAP_check", "all", check.eap
    yield "bias_shift", "all", check.shift
    yield "bias_diff", "all", check.diff
    yield "bias_diff_ci_low", "all", check.ci95[0]
    yield "bias_diff_ci_high", "all", check.ci95[1]
    yield "bias_flag", "all", float(check.flagged)


ESTIMATE_COLUMNS = (
    "run", "maAP", "ci_low", "ci_high", "topics", "statMAP", "EAP", "EAP - shift x statMAP",
    "diff_ci_low", "diff_ci_high", "bias_flag",
)  # fmt: skip


def estimates_table(estimates: Mapping[str, RunEstimates]) -> Table:
    """Per run, by model-assisted MAP (highest first): the estimate, its 95% interval,
    the topics averaged, statMAP and EAP (over the topics valid for both), their
    difference with its interval, and ``flagged`` or ``no``."""
    ranked = sorted(estimates.values(), key=lambda e: (-_key(e.ap.estimate), e.name))
    rows = [
        (e.name, e.ap.estimate, *e.ap.ci95, e.ap.n_topics, e.check.statap,
         e.check.eap, e.check.diff, *e.check.ci95,
         "flagged" if e.check.flagged else "no")
        for e in ranked
    ]  # fmt: skip
    return Table("model_assisted", ESTIMATE_COLUMNS, rows)


def _key(value: float) -> float:
    return value if value == value else -math.inf


def job_sample_estimates(
    *, job: MatchJob, sample: Sample, runs: Mapping[str, Scores]
) -> dict[str, RunEstimates]:
    """:func:`runs_model_assisted` with the sample's prels and the job's cross-fitted
    p, at the collection's relevance threshold."""
    return runs_model_assisted(
        prels=sample_prels(sample),
        probs=job_crossfit(job=job, sample=sample),
        runs=runs,
        level=job.collection.relevant_threshold,
    )
