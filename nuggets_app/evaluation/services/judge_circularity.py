"""Circularity: a run built with an automatic judge's model, estimated with that judge.

A run may name the model it used (``Run.model``, set when its file is imported); a judge
names its own (``Judge.model``). Where the two are the same model (case aside) and the
job's fit kept that judge's family, the run's estimate leans on a judge that shares
its model's view of relevance: the judge may favour it. :func:`circular_runs` gives,
for each such run, its estimate from the cross-fit without that judge's family (the
same job, sample and design), for the runs page to show beside the default figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nuggets_app.evaluation.services import estimates
from nuggets_app.inference.services.job_judges import stored_judges
from nuggets_app.learning.ablation import judge_family
from nuggets_app.models import JobInference, Judge, MatchJob, Run, Sample

Scores = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class CircularRun:
    """A run whose model is a kept judge's, with its MAP without that judge."""

    run: str
    model: str
    judge: str
    map: float
    ci95: tuple[float, float]


def circular_runs(
    *, job: MatchJob, sample: Sample, runs: Mapping[str, Scores]
) -> list[CircularRun]:
    """The runs of ``runs`` whose model is the model of a judge the job's fit kept,
    each with its model-assisted MAP from the cross-fit without that judge."""
    stored = JobInference.objects.filter(job=job, model__isnull=False).first()
    if stored is None or stored.model is None:
        return []
    fitted_without = tuple(stored.model.get("ablate", ()))
    kept = [n for n in stored_judges(job) if judge_family(n) not in fitted_without]
    by_model: dict[str, list[str]] = {}
    for name, model in Judge.objects.filter(
        collection_id=job.collection_id, name__in=kept
    ).values_list("name", "model"):
        if model.strip():
            by_model.setdefault(model.strip().casefold(), []).append(name)
    run_models = dict(
        Run.objects.filter(collection_id=job.collection_id, name__in=list(runs))
        .exclude(model="")
        .values_list("name", "model")
    )
    out = []
    for judge in sorted({j for names in by_model.values() for j in names}):
        leaning = {
            run: model
            for run, model in run_models.items()
            if judge in by_model.get(model.strip().casefold(), [])
        }
        if not leaning:
            continue
        probs = estimates.job_crossfit(
            job=job, sample=sample, ablate=(*fitted_without, judge_family(judge))
        )
        found = estimates.job_sample_estimates(
            job=job, sample=sample, runs={r: runs[r] for r in leaning}, probs=probs
        )
        out += [
            CircularRun(run, leaning[run], judge, e.ap.estimate, e.ap.ci95)
            for run, e in found.items()
        ]
    return sorted(out, key=lambda c: (c.run, c.judge))
