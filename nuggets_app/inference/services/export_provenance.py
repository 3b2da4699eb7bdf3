"""What an export's provenance says about the job and its model (the qrels and
probabilistic qrels sidecars): the job's parameters and the fitted model's features,
coefficients, calibration and reliability."""

from __future__ import annotations

from typing import Any

from nuggets_app.models import JobInference, MatchJob


def model_info(job: MatchJob) -> dict[str, Any] | None:
    """The model behind probabilities: features, coefficients, calibration."""
    info = JobInference.objects.filter(job=job).first()
    if info is None or info.model is None:
        return None
    model = info.model
    return {
        "name": "logistic regression on per-topic z-scored features, Platt-calibrated",
        "features": model.get("feature_names", info.feature_names),
        "coefficients": dict(
            zip(model.get("feature_names", []), model.get("coef", []), strict=False)
        ),
        "intercept": model.get("intercept"),
        "calibration": model.get("calibration"),
        "fitted_at": info.fitted_at.isoformat() if info.fitted_at else None,
        "fit": {k: v for k, v in info.fit_info.items() if k in ("judged", "relevant")},
        # The automatic judges the fit read, and which of them it kept.
        "judges": info.fit_info.get("judges", []),
        "judge_choice": info.fit_info.get("judge_choice", []),
        "reliability": {
            k: v
            for k, v in (info.fit_info.get("reliability") or {}).items()
            if k in ("n", "brier", "ece")
        },
        "json": model,
    }


def job_info(job: MatchJob | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "id": job.pk,
        "name": job.name,
        "source": job.source,
        "pool": job.pool.name if job.pool is not None else None,
        "sample": job.sample.name if job.sample is not None else None,
        "k": job.k,
        "lam": job.lam,
        "scoring": job.scoring,
        "scoring_text": job.scoring_text(),
        "stem": job.stem,
        "stopwords": job.stopwords,
        "nugget_filter": job.nugget_filter,
        "relevance_level": job.relevance_level,
        "relevance": job.relevance_text(),
        "fit_sample": fit_sample_name(job),
    }


def fit_sample_name(job: MatchJob) -> str | None:
    """The sample whose design the job's model was fitted with, if any."""
    info = JobInference.objects.filter(job=job).select_related("fit_sample").first()
    return info.fit_sample.name if info and info.fit_sample else None
