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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lab.services.simulation_config import SimulationConfig
from nuggets_app.evaluation.selectors import job_probability_qrels, sample_prels
from nuggets_app.evaluation.services.estimates import (
    RunEstimates,
    job_crossfit,
    job_sample_estimates,
)
from nuggets_app.inference.selectors import nuggets_kept
from nuggets_app.inference.services import embeddings
from nuggets_app.inference.services.job_judges import model_judges
from nuggets_app.inference.services.job_model import (
    job_model_fit,
    job_probabilities,
)
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.learning.ablation import FEATURE_FAMILIES, judge_family
from nuggets_app.models import (
    Document,
    JobInference,
    MatchJob,
    Nugget,
    Sample,
    Topic,
)

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
    # The feature families the job's model kept (families_kept).
    families: dict[str, Any] = field(default_factory=dict)


def job_fit_and_figures(
    *,
    job: MatchJob,
    sample: Sample,
    runs: Mapping[str, Scores],
    config: SimulationConfig | None = None,
) -> JobFigures:
    """Fit the job's model with ``sample``'s design (as ``match --fit`` does for a
    job on the sample's pool), with the feature families of ``config`` (its
    ``ablate``, its ``semantic`` features and the job's own nugget choice unless
    ``nugget_choice`` is off), and read every figure a user would.

    With ``semantic``, the job's documents and nuggets are embedded first (what the
    collection's embedding job and the nuggets' embedding task do for a user's job)."""
    config = config or SimulationConfig()
    if config.semantic:
        embeddings_ensure(job)
    job_model_fit(
        job=job,
        sample=sample,
        ablate=config.ablate,
        semantic=config.semantic,
        nugget_choice=config.nugget_choice,
    )
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
    stored = JobInference.objects.get(job=job)
    model, info = stored.model or {}, stored.fit_info or {}
    return JobFigures(
        probabilities=probabilities,
        crossfit=job_crossfit(job=job, sample=sample),
        prels=sample_prels(sample),
        estimates=(
            job_sample_estimates(job=job, sample=sample, runs=runs)
            if runs and not config.inputs_only
            else {}
        ),
        expected=job_probability_qrels(job),
        model=json.loads(json.dumps(model)),
        families=families_kept(model, info),
    )


def families_kept(model: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
    """Which feature families the job's model kept, and why (report.json
    ``families``): every family but those its fit left out, whether the semantic
    features were used (and if not why), and the nugget choice's log-losses."""
    ablate = list(model.get("ablate", []))
    names = set(model.get("feature_names", []))
    kept = [
        family
        for family, members in FEATURE_FAMILIES.items()
        if family not in ablate and members & names
    ]
    judges = [judge_family(n) for n in model_judges(model)]
    return {
        "kept": kept + [f for f in judges if f not in ablate],
        "left_out": ablate,
        "semantic": info.get("semantic"),
        "nugget_choice": info.get("nugget_choice"),
        # Each automatic judge the fit read, whether it kept it and its log-losses.
        "judges": info.get("judge_choice", []),
    }


def embeddings_ensure(job: MatchJob) -> None:
    """Embed the job's documents and the nuggets its filter keeps that have no stored
    embedding yet (in this process; kept for the next simulation)."""
    document_ids = sorted(
        {d for ids in job.chunks.values_list("document_ids", flat=True) for d in ids}
    )
    for start in range(0, len(document_ids), 500):
        embeddings.documents_embed_missing(
            document_ids=document_ids[start : start + 500]
        )
    nuggets = nuggets_kept(Nugget.objects.filter(topic__in=job.topics.all()), job)
    embeddings.nuggets_embed(nugget_ids=list(nuggets.values_list("pk", flat=True)))
