"""The product's own figures of a simulation's job: what a user of the job gets.

The simulation adds only the simulated assessor and the comparison with the truth;
everything it reports of the relevance model and the estimates is read here through
the functions behind ``match --fit``, ``evaluate --job N --sample S``, the runs page
and ``export_qrels``: the job's fit with the sample's design, its probabilities, the
cross-fit the estimates use, the sample's prels, the model-assisted estimates with
the bias check, and the probabilistic qrels of EAP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nuggets_app.evaluation.selectors import job_probability_qrels, sample_prels
from nuggets_app.evaluation.services.estimates import (
    RunEstimates,
    job_crossfit,
    job_sample_estimates,
)
from nuggets_app.inference.services.job_model import (
    job_model_fit,
    job_probabilities,
)
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.models import Document, JobInference, MatchJob, Sample, Topic

Scores = dict[str, dict[str, float]]


@dataclass
class JobFigures:
    """The job's figures, keyed by qid and docno."""

    probabilities: Scores  # the full fit's p of every document of the judged topics
    crossfit: Scores  # the cross-fitted p behind the estimates
    prels: dict[str, TopicPrels]
    estimates: dict[str, RunEstimates]  # of ``runs`` ({} when none given)
    expected: Scores  # probabilistic qrels: judged 1/0, else p (EAP)
    model: dict[str, Any]


def job_fit_and_figures(
    *,
    job: MatchJob,
    sample: Sample,
    runs: Mapping[str, Scores],
    ablate: Sequence[str] = (),
) -> JobFigures:
    """Fit the job's model with ``sample``'s design (as ``match --fit`` does for a
    job on the sample's pool), without the feature families ``ablate``, and read
    every figure a user would."""
    job_model_fit(job=job, sample=sample, ablate=ablate)
    columns = job_probabilities(job=job, override=False)
    qids = dict(Topic.objects.filter(pk__in=list(columns)).values_list("pk", "qid"))
    ids = {d for docs, _ in columns.values() for d in docs.tolist()}
    docnos = dict(Document.objects.filter(pk__in=ids).values_list("pk", "docno"))
    probabilities = {
        qids[t]: {
            docnos[d]: float(v) for d, v in zip(docs.tolist(), p.tolist(), strict=True)
        }
        for t, (docs, p) in columns.items()
    }
    model = JobInference.objects.get(job=job).model
    return JobFigures(
        probabilities=probabilities,
        crossfit=job_crossfit(job=job, sample=sample),
        prels=sample_prels(sample),
        estimates=(
            job_sample_estimates(job=job, sample=sample, runs=runs) if runs else {}
        ),
        expected=job_probability_qrels(job),
        model=json.loads(json.dumps(model)),
    )
