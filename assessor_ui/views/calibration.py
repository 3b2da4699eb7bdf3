"""The job's calibration of p outside the pool, as the job and new-run pages show it."""

from __future__ import annotations

import math

from nuggets_app.evaluation.services.outside_pool import (
    CALIBRATION_NOTE,
    job_calibration_shown,
)
from nuggets_app.ir.outside_pool import Calibration
from nuggets_app.models import MatchJob


def calibration_context(job: MatchJob, found: Calibration | None = None) -> dict:
    """Template context of ``_calibration.html`` (computed when not given; empty
    for a job not done)."""
    if found is None:
        if job.status != MatchJob.Status.DONE:
            return {}
        found = job_calibration_shown(job=job)
    if found is None:
        return {}
    rows = [
        {"name": n, "e": e, "total": False} for n, e in found.by_contributor.items()
    ]
    rows.append({"name": "all", "e": found.evidence, "total": True})
    return {
        "calibration": found,
        "calibration_rows": rows,
        "calibration_sd": math.sqrt(found.var),
        "calibration_shrinkage": round(100 * found.shrinkage),
        "calibration_note": CALIBRATION_NOTE,
    }
