"""The simulation report's comparison of MAP estimators, with intervals and coverage.

:func:`estimators_report` adds to :func:`nuggets_app.services.simulation_report.
report_build`'s dict:

* ``estimators``: for ``sample_only`` (MAP of the judged sample alone), ``statap``
  (statMAP, interval ``± 1.96 sqrt(VAR_MAP)`` of :mod:`nuggets_app.ir.statap`),
  ``eap`` (expected AP, the full-fit model's p where unjudged) and ``model_assisted``
  (:func:`nuggets_app.ir.model_assisted.model_assisted_evaluate` with the cross-fitted
  p of :mod:`nuggets_app.learning.crossfit`, as the application reports it: AP by
  Beale's ratio estimator, per-topic values bounded to [0, 1]; p ≡ 0,
  i.e. statAP with the linearised variance, when the simulation has no model):
  ``map`` per run, ``ci`` per run
  (``[low, high]``, None without an interval), ``tau`` and ``tau_ap`` against the
  full-qrels MAP ranking (as ``systems``), ``coverage`` and ``coverage_all_topics``
  (None without intervals), ``half_width`` (mean over runs, None without intervals),
  ``n_topics`` per run; with intervals also ``shift`` (the mean over runs of the
  estimate minus its true value), ``error_sd``, ``rmse`` and ``width_called_for``
  (1.5 x 1.96 x RMSE, the half-width the errors call for); ``model_assisted`` also
  has ``intervals``: per interval
  method of :mod:`nuggets_app.ir.intervals` (the same estimates), ``coverage``,
  ``coverage_all_topics``, ``half_width``, and ``model_only_topics``, the topics
  whose sample holds no relevant judged document;
* ``pooled_truth``: per run, the *true value* the intervals aim at: MAP under the full
  qrels restricted to the pooled documents (an unpooled document counts non-relevant,
  ``R`` = the relevant pooled documents), ``map`` over every topic with a relevant
  pooled document;
* ``bias_check``: per run, :func:`nuggets_app.ir.model_assisted.bias_check` with the
  cross-fitted p (``eap``, ``statap``, ``diff = eap - statap``, its ``ci``, ``flagged``
  when the interval excludes 0, ``model_assisted``, ``n_topics``);
* ``default_estimator``: :data:`nuggets_app.ir.model_assisted.DEFAULT_ESTIMATOR`.

Coverage: the share of runs whose true value lies inside their 95% interval.
``coverage`` takes the true value over the topics the run's estimate averages (statAP
and the model-assisted estimate leave out topics whose ``R̂ <= 0``; a topic with no
relevant pooled document then has true AP 0); ``coverage_all_topics`` over every topic
with a relevant pooled document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from lab.services.simulation import SimulationData
from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.estimator import REPORTED
from nuggets_app.ir.intervals import INTERVALS
from nuggets_app.ir.measures import average_precision
from nuggets_app.ir.model_assisted import DEFAULT_ESTIMATOR, model_assisted_evaluate
from nuggets_app.ir.prels import TopicPrels, ranking_order
from nuggets_app.ir.ranking import kendall_tau, tau_ap_symmetric
from nuggets_app.ir.run_intervals import Z_95
from nuggets_app.ir.statap import statap_evaluate

# A mean half-width above this many times 1.96 x RMSE is wider than the errors need.
WIDTH_FACTOR = 1.5
Labels = Mapping[str, Mapping[str, int]]
Runs = dict[str, dict[str, dict[str, float]]]


def _pooled_relevant(data: SimulationData, truth: Labels) -> dict[str, set[str]]:
    return {
        q: {d for d in docs if truth.get(q, {}).get(d, 0)}
        for q, docs in data.pool.items()
    }


def _per_topic_truth(
    runs: Runs, relevant: Mapping[str, set[str]]
) -> dict[str, dict[str, float]]:
    return {
        name: {
            q: average_precision(ranking_order(docs), relevant[q])
            for q, docs in run.items()
        }
        for name, run in runs.items()
    }


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _ranking_agreement(
    full: Mapping[str, float], scores: Mapping[str, float]
) -> dict[str, float]:
    order = sorted(full, key=lambda r: (-full[r], r))
    return {
        "tau": kendall_tau(full, scores),
        "tau_ap": tau_ap_symmetric(
            order, sorted(scores, key=lambda r: (-scores[r], r))
        ),
    }


def _coverage(
    ci: Mapping[str, tuple[float, float]], truth: Mapping[str, float]
) -> float | None:
    inside = [
        lo <= truth[run] <= hi
        for run, (lo, hi) in ci.items()
        if math.isfinite(lo) and math.isfinite(hi) and math.isfinite(truth[run])
    ]
    return sum(inside) / len(inside) if inside else None


def _half_width(ci: Mapping[str, tuple[float, float]]) -> float | None:
    widths = [(hi - lo) / 2 for lo, hi in ci.values() if math.isfinite(hi - lo)]
    return _mean(widths) if widths else None


def _errors(
    scores: Mapping[str, float], truth: Mapping[str, float]
) -> dict[str, float | None]:
    """The errors against the true values: ``shift`` (their mean over runs, the part
    every run shares), ``error_sd``, ``rmse`` and ``width_called_for`` (1.5 x 1.96 x
    RMSE: a mean half-width above it is wider than the errors need)."""
    errors = [
        scores[run] - truth[run]
        for run in scores
        if math.isfinite(scores[run]) and math.isfinite(truth.get(run, math.nan))
    ]
    if not errors:
        return dict.fromkeys(("shift", "error_sd", "rmse", "width_called_for"))
    shift = _mean(errors)
    rmse = math.sqrt(_mean([e * e for e in errors]))
    return {
        "shift": shift,
        "error_sd": math.sqrt(_mean([(e - shift) ** 2 for e in errors])),
        "rmse": rmse,
        "width_called_for": WIDTH_FACTOR * Z_95 * rmse,
    }


def _interval_estimator(
    estimates: Mapping[str, tuple[float, tuple[float, float], list[str]]],
    full: Mapping[str, float],
    per_topic: Mapping[str, Mapping[str, float]],
    all_topics: Mapping[str, float],
) -> dict[str, Any]:
    """``estimates``: run -> (MAP, interval, qids averaged)."""
    scores = {run: value for run, (value, _, _) in estimates.items()}
    ci = {run: interval for run, (_, interval, _) in estimates.items()}
    on_topics = {
        run: _mean([per_topic[run][q] for q in qids])
        for run, (_, _, qids) in estimates.items()
    }
    return {
        "map": scores,
        "ci": {run: list(interval) for run, interval in ci.items()},
        "n_topics": {run: len(qids) for run, (_, _, qids) in estimates.items()},
        **_ranking_agreement(full, scores),
        "coverage": _coverage(ci, on_topics),
        "coverage_all_topics": _coverage(ci, all_topics),
        "half_width": _half_width(ci),
        **_errors(scores, on_topics),
    }


def _assisted(
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    runs: Runs,
    design: Mapping[str, Mapping[str, float]],
    interval: str,
) -> dict[str, tuple[float, tuple[float, float], list[str]]]:
    """run -> (MAP, interval, qids averaged) of the reported estimator with the
    given interval method."""
    estimator = replace(REPORTED, interval=interval)
    found = model_assisted_evaluate(
        prels, probs, runs, estimator=estimator, design=design
    )
    return {
        name: (ap.estimate, ap.ci95, [t.qid for t in ap.topics])
        for name, ap in ((n, m["AP"]) for n, m in found.items())
    }


def estimators_report(
    data: SimulationData,
    *,
    truth: Labels,
    prels: Mapping[str, TopicPrels],
    system_maps: Mapping[str, Mapping[str, float]],
) -> dict[str, Any]:
    """The keys listed in the module docstring. ``truth`` and ``prels`` are binary
    (grade >= the relevance level: 1); ``system_maps`` is the report's
    ``systems["map"]`` (``full``, ``sample_only``, ``eap`` per run)."""
    topics = set(data.pool)
    runs: Runs = {
        name: {q: docs for q, docs in run.items() if q in topics}
        for name, run in sorted(data.runs.items())
    }
    full = dict(system_maps["full"])
    relevant = _pooled_relevant(data, truth)
    per_topic = _per_topic_truth(runs, relevant)
    all_topics = {
        name: _mean([ap for q, ap in aps.items() if relevant[q]])
        for name, aps in per_topic.items()
    }
    statap: dict[str, tuple[float, tuple[float, float], list[str]]] = {}
    for name, run in runs.items():
        result = statap_evaluate(prels, run)
        valid = [t.qid for t in result.topics if t.valid]
        statap[name] = (result.summary.stat_map, result.summary.ci95, valid)
    probs = data.crossfit or {}
    design = data.design or {}
    # Every interval method on the same estimates (the comparison of the intervals
    # page); the reported one is the product's own, from the job (the one path).
    by_interval = {
        method: _assisted(prels, probs, runs, design, method) for method in INTERVALS
    }
    if data.estimates is not None:
        model_assisted = {
            name: (e.ap.estimate, e.ap.ci95, [t.qid for t in e.ap.topics])
            for name, e in data.estimates.items()
            if name in runs
        }
        checks = [e.check for e in data.estimates.values()]
    else:
        model_assisted = by_interval[REPORTED.interval]
        checks = bias_check(prels, probs, runs, estimator=REPORTED, design=design)
    estimators: dict[str, Any] = {}
    for name in ("sample_only", "eap"):
        scores = dict(system_maps[name])
        estimators[name] = {
            "map": scores,
            "ci": None,
            **_ranking_agreement(full, scores),
            "coverage": None,
            "coverage_all_topics": None,
            "half_width": None,
        }
    estimators["statap"] = _interval_estimator(statap, full, per_topic, all_topics)
    estimators["model_assisted"] = _interval_estimator(
        model_assisted, full, per_topic, all_topics
    )
    estimators["model_assisted"]["p"] = "crossfit" if data.crossfit else "none"
    estimators["model_assisted"]["intervals"] = {
        method: {
            key: _interval_estimator(found, full, per_topic, all_topics)[key]
            for key in ("coverage", "coverage_all_topics", "half_width")
        }
        for method, found in by_interval.items()
    }
    estimators["model_assisted"]["model_only_topics"] = sorted(
        q for q, t in prels.items() if t.label != "UMASS" and not any(t.rel.values())
    )
    return {
        "job": {"id": data.job_id, "sample": data.sample_name},
        "estimators": {k: estimators[k] for k in sorted(estimators)},
        "default_estimator": DEFAULT_ESTIMATOR,
        "pooled_truth": {"map": all_topics},
        "bias_check": {
            c.run: {
                "eap": c.eap,
                "statap": c.statap,
                "diff": c.diff,
                "ci": list(c.ci95),
                "shift": c.shift,
                "raw_diff": c.raw_diff,
                "flagged": c.flagged,
                "model_assisted": c.model_assisted,
                "n_topics": c.n_topics,
            }
            for c in checks
        },
    }
