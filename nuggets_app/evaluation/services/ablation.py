"""What a finished job's nuggets contribute: the relevance model and the default
estimate with and without the nugget features.

:func:`nugget_contribution` fits the job's model twice, with every feature and with the
``nuggets`` family left out (:mod:`nuggets_app.learning.ablation`), on the features the
job's chunks stored and the judgments of now, and reports for each:

* the model's **held-out log-loss** on the judged documents: each judged document's p
  comes from a model fitted without its fold (five folds of judged documents, as the
  reliability diagram's, :func:`nuggets_app.inference.services.job_model.
  heldout_predictions`), ``-mean(y ln p + (1 - y) ln(1 - p))``; lower is better;
* the **mean width of the 95% intervals** of the default estimate (model-assisted MAP
  with the cross-fitted p, :mod:`nuggets_app.evaluation.services.estimates`) over the
  collection's runs, from the sample the estimate uses; narrower is better, at the
  same coverage (the intervals are honest either way: the estimate is unbiased
  whatever p is, a better p only narrows it).

The job page shows both on its relevance-model card, so that a user learns whether
their nuggets pay on their own collection. It is a kept computation (``computed``):
computed when asked, kept until the job, the judgments or the runs change.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from nuggets_app.evaluation import selectors as selectors_eval
from nuggets_app.evaluation.services.estimates import (
    estimate_sample,
    job_crossfit,
    runs_model_assisted,
)
from nuggets_app.inference.services.job_model import (
    fit_data,
    job_inference,
    stored_semantic,
)
from nuggets_app.inference.services.matching.base import MatchJobError
from nuggets_app.learning.family_choice import log_loss, verdict
from nuggets_app.learning.reliability import heldout_predictions
from nuggets_app.models import MatchJob
from nuggets_app.operations.services.computed import Progress, computed
from nuggets_app.pooling.selectors import sample_design

VARIANTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("with nuggets", ()),
    ("without nuggets", ("nuggets",)),
)


def _versions(*, job_id: int, **_: Any) -> list:
    job = MatchJob.objects.select_related("collection").get(pk=job_id)
    collection = job.collection
    return [
        selectors_eval.collection_version(collection),
        selectors_eval.job_version(job),
        selectors_eval.judgments_version(collection),
        selectors_eval.runs_version(collection),
    ]


@computed(versions=_versions)
def nugget_contribution(*, job_id: int, progress: Progress) -> dict[str, Any]:
    """Per variant (with, without the nugget features): held-out log-loss and the
    judged documents it is measured on, mean 95% interval width of the default
    estimate's MAP and the runs it averages; and ``verdict``: ``"pay"``,
    ``"hurt"`` or ``"nothing"`` from the log-loss. Raises ``ValueError`` when the job
    cannot be fitted."""
    job = MatchJob.objects.select_related("collection").get(pk=job_id)
    if job.status != MatchJob.Status.DONE:
        raise MatchJobError(f"job {job.pk} is {job.status}; measure a finished job")
    sample = estimate_sample(job)
    # The rows, weights and anchor of the job's own fit (the one design).
    stored = job_inference(job)
    fit = fit_data(
        job, sample, semantic=stored_semantic(stored.model if stored else None)
    )
    data, weights, pool_relevant = fit.rows, fit.weights, fit.pool_relevant
    runs = selectors_eval.collection_runs(job.collection) if sample is not None else {}
    prels = selectors_eval.sample_prels(sample) if sample is not None else {}
    rows = []
    for step, (name, ablate) in enumerate(VARIANTS):
        progress(step, len(VARIANTS))
        held = heldout_predictions(
            data,
            weights=weights,
            pool_relevant=pool_relevant,
            ablate=ablate,
            feature_names=fit.feature_names,
        )
        width, count = None, 0
        if sample is not None and runs:
            found = runs_model_assisted(
                prels=prels,
                probs=job_crossfit(job=job, sample=sample, ablate=ablate),
                runs=runs,
                level=job.relevance_level,
                design=sample_design(sample=sample),
            )
            widths = [
                high - low
                for low, high in (e.ap.ci95 for e in found.values())
                if math.isfinite(low) and math.isfinite(high)
            ]
            width, count = (
                (float(np.mean(widths)), len(widths)) if widths else (None, 0)
            )
        rows.append(
            {
                "features": name,
                "ablate": list(ablate),
                "logloss": log_loss(held),
                "judged": len(held),
                "width": width,
                "runs": count,
            }
        )
    progress(len(VARIANTS), len(VARIANTS))
    return {
        "variants": rows,
        "verdict": _verdict(rows[0], rows[1]),
        "sample": sample.name if sample is not None else None,
    }


def _verdict(with_: dict[str, Any], without: dict[str, Any]) -> str:
    return verdict(with_["logloss"], without["logloss"])
