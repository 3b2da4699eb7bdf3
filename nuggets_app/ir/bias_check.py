"""The bias check: does the model-only EAP credit a run as the judged sample does?

Per run, MAP under EAP (the model, human labels where judged), statAP (p ≡ 0) and the
model-assisted estimate, over the topics valid for all three; the shift common to every
run is removed before a run is flagged. Derivation and worked example:
docs/explanation/model-assisted.md, "The bias check". No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nuggets_app.ir.estimator import PLAIN, REPORTED, Estimator
from nuggets_app.ir.expected import expected_ap
from nuggets_app.ir.model_assisted import (
    Probs,
    Runs,
    topic_estimates,
    topic_samples,
)
from nuggets_app.ir.prels import TopicPrels, ranking_order
from nuggets_app.ir.run_intervals import (
    NAN,
    TopicEstimate,
    interval95,
    run_estimate,
)


@dataclass(frozen=True)
class BiasCheck:
    """Does the model-only EAP credit a run as the judged sample does, once the shift
    common to every run is removed (means over the topics valid for all estimators)?

    ``shift = Σ_runs EAP / Σ_runs statAP``: a model that scores every run a little low
    (or statAP's own ratio bias) moves all runs alike and changes no ranking, so it is
    not what the check is for. ``diff = eap - shift * statap`` is what remains: how far
    the model credits this run above (> 0) or below (< 0) the other runs, relative to
    the sample. Its interval uses statAP's linearised variance (``shift^2 var``, EAP and
    the shift held fixed); ``flagged`` when it excludes 0. ``raw_diff = eap - statap``
    is the plain difference. ``correction = model_assisted - eap`` with the
    model-assisted variance: how far the sample moved the model's answer.
    """

    run: str
    eap: float
    statap: float
    diff: float
    ci95: tuple[float, float]
    flagged: bool
    raw_diff: float
    shift: float
    model_assisted: float
    correction: float
    correction_ci95: tuple[float, float]
    n_topics: int


def bias_check(
    judged: Mapping[str, TopicPrels],
    probs: Probs,
    runs: Runs,
    *,
    estimator: Estimator = REPORTED,
    level: int = 1,
    unsampled: Probs | None = None,
    design: Probs | None = None,
    shift: float | None = None,
) -> list[BiasCheck]:
    """Per run: MAP under EAP (the model, human labels where judged), statAP (p ≡ 0,
    :data:`~nuggets_app.ir.estimator.PLAIN`) and the model-assisted AP by
    ``estimator`` (default: what the application reports), over the topics valid for
    all three. Lists are ordered by :func:`ranking_order` (the caller cuts them).

    ``shift = Σ_runs EAP / Σ_runs statAP`` (per-run means); ``diff = EAP - shift *
    statAP`` has the interval ``± 1.96 shift sqrt(Σ var_statAP / n²)`` with the
    linearised variance (EAP and the shift treated as fixed); ``correction =
    model_assisted - EAP`` the model-assisted interval. See :class:`BiasCheck`.
    ``unsampled``: p of documents outside the sampled pool (new runs' unpooled
    documents), in EAP and, unscaled, in the model-assisted AP. ``design``: π of
    every pooled document, for the model-assisted variance.
    ``shift``: the shift of the reference runs (a job's pooled runs,
    :func:`bias_shift`), so that a run's verdict does not depend on which other runs
    are checked beside it; None: the shift of ``runs``.
    """
    unsampled = unsampled or {}
    assisted = topic_samples(
        judged,
        probs,
        estimator=estimator,
        level=level,
        unsampled=unsampled,
        design=design,
    )
    plain = topic_samples(judged, {}, estimator=PLAIN, level=level)
    per_run: dict[str, list[tuple[float, TopicEstimate, TopicEstimate]]] = {}
    for run in sorted(runs):
        rows = per_run.setdefault(run, [])
        for qid in assisted:
            if qid not in runs[run]:
                continue
            ranking = ranking_order(runs[run][qid])
            if not (assisted[qid].est_r > 0 and plain[qid].est_r > 0):
                continue
            ma = topic_estimates(assisted[qid], ranking)
            st = topic_estimates(plain[qid], ranking)
            merged = {**unsampled.get(qid, {}), **probs.get(qid, {})}
            merged.update(
                {d: float(rel >= level) for d, rel in judged[qid].rel.items()}
            )
            rows.append((expected_ap(ranking, merged), st["AP"], ma["AP"]))
    if shift is None:
        shift = bias_shift([_bias_row(run, rows, 1.0) for run, rows in per_run.items()])
    return [_bias_row(run, rows, shift) for run, rows in per_run.items()]


def bias_shift(checks: Sequence[BiasCheck]) -> float:
    """``Σ_runs EAP / Σ_runs statAP`` over the runs with a valid topic (1 without)."""
    valid = [c for c in checks if c.n_topics]
    eap_total = math.fsum(c.eap for c in valid)
    statap_total = math.fsum(c.statap for c in valid)
    return eap_total / statap_total if statap_total > 0 else 1.0


def _bias_row(
    run: str, rows: Sequence[tuple[float, TopicEstimate, TopicEstimate]], shift: float
) -> BiasCheck:
    eap = math.fsum(r[0] for r in rows) / len(rows) if rows else NAN
    st = run_estimate(run, "AP", [r[1] for r in rows])
    ma = run_estimate(run, "AP", [r[2] for r in rows])
    diff, correction = eap - shift * st.estimate, ma.estimate - eap
    low, high = interval95(diff, shift * shift * st.var)
    return BiasCheck(
        run=run,
        eap=eap,
        statap=st.estimate,
        diff=diff,
        ci95=(low, high),
        flagged=bool(low > 0 or high < 0),
        raw_diff=eap - st.estimate,
        shift=shift,
        model_assisted=ma.estimate,
        correction=correction,
        correction_ci95=interval95(correction, ma.var),
        n_topics=len(rows),
    )
