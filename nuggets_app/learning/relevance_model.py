"""The inference model: the probability that a pooled document is relevant.

Pure and Django-free. An L2-regularised logistic regression over the features of
:mod:`nuggets_app.learning.relevance_features` (:data:`FEATURE_NAMES`), fitted on the
judged documents of every topic, turns them into probabilities, calibrated by
cross-validation over topics.

Model (:class:`RelevanceModel`): the document-level features are z-scored within each
topic's pool (mean 0, sd 1 over the topic's pooled documents, judged or not; a constant
feature becomes 0), so a score means "how far above this topic's typical pooled
document"; topic-level features (``log_prevalence``) and an automatic judge's columns
(a grade means the same on every topic) are centred and scaled over all rows at fit
time. The L2 strength is chosen by cross-validation over the same topic
folds (:func:`select_c`): with one or two judged relevant documents per topic, which
leave-one-out strips of their own nugget, feedback and similarity evidence, a light
penalty fits noise and a stronger one wins on held-out topics. Weights (e.g. inverse
inclusion probabilities of a statAP sample) make the judged documents stand for the
whole pool. The fitted logits are calibrated by
Platt scaling fitted on out-of-fold logits (folds are groups of topics), so
probabilities are honest on topics the model did not see.

Anchoring (``pool_relevant`` of :func:`model_fit`): when the judged documents are a
probability sample of the pools, the calibrated model is anchored to the sample's
Horvitz-Thompson estimate of the number of relevant pooled documents
(:func:`horvitz_thompson_relevant`, ``Σ y / π`` over the judged documents: statAP's
estimated R summed over topics). One logit shift, common to every topic, is added to
the calibrated logits (:func:`anchor_shift`) so that the model's expected count over the
pools, the human labels of the judged documents plus p of the unjudged ones, equals
that estimate. Platt scaling learns the calibration on judged documents, described with
leave-one-out features; with one or two judged relevant documents per topic (a small
collection, a small sample) those look weaker than unjudged relevant documents with
the same evidence, and the probabilities of the unjudged documents came out too low in
total (ADI at 10%: 0.83 of the true count). The Horvitz-Thompson estimate is unbiased
whatever the features do; summed over all topics it is stable enough to fix one
number (per topic it would be too noisy). A shift adds the same amount to every logit:
rankings within and across topics, hence MAP over the unjudged documents, do not
change, only the totals.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nuggets_app.learning.ablation import JUDGE_PREFIX, ablate_parse, kept_columns
from nuggets_app.learning.relevance_features import (
    FEATURE_NAMES,
    TOPIC_FEATURES,
    FloatArray,
    RelevanceModelError,
)

TopicRows = tuple[FloatArray, npt.NDArray[Any]]


@dataclass(frozen=True)
class RelevanceModel:
    """A fitted model: features, which are z-scored per topic, the scaling of the others,
    coefficients over the standardised features, intercept, Platt calibration and the
    anchoring shift: ``p = sigmoid(slope · logit + offset + shift)``."""

    feature_names: tuple[str, ...]
    per_topic: tuple[bool, ...]
    center: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    calibration: tuple[float, float] = (1.0, 0.0)
    c: float = 1.0
    fitted_rows: int = 0
    shift: float = 0.0
    # Feature families left out of the fit (nuggets_app.learning.ablation): their
    # coefficients are 0.
    ablate: tuple[str, ...] = ()

    def to_json(self) -> str:
        """The model as a JSON object (every field by name; ``ablate`` only when
        families were left out)."""
        extra = {"ablate": list(self.ablate)} if self.ablate else {}
        return json.dumps(
            {
                **extra,
                "feature_names": list(self.feature_names),
                "per_topic": list(self.per_topic),
                "center": list(self.center),
                "scale": list(self.scale),
                "coef": list(self.coef),
                "intercept": self.intercept,
                "calibration": list(self.calibration),
                "c": self.c,
                "fitted_rows": self.fitted_rows,
                "shift": self.shift,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> RelevanceModel:
        """Read :meth:`to_json`; :class:`RelevanceModelError` names a bad field."""
        try:
            data = json.loads(text)
            names = tuple(str(n) for n in data["feature_names"])
            model = cls(
                feature_names=names,
                per_topic=tuple(bool(v) for v in data["per_topic"]),
                center=tuple(float(v) for v in data["center"]),
                scale=tuple(float(v) for v in data["scale"]),
                coef=tuple(float(v) for v in data["coef"]),
                intercept=float(data["intercept"]),
                calibration=(
                    float(data["calibration"][0]),
                    float(data["calibration"][1]),
                ),
                c=float(data.get("c", 1.0)),
                fitted_rows=int(data.get("fitted_rows", 0)),
                shift=float(data.get("shift", 0.0)),
                ablate=ablate_parse(data.get("ablate", [])),
            )
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise RelevanceModelError(f"relevance model JSON: {error}") from error
        sizes = {
            len(model.per_topic),
            len(model.center),
            len(model.scale),
            len(model.coef),
        }
        if sizes != {len(names)}:
            raise RelevanceModelError(
                "relevance model JSON: feature_names, per_topic, center, scale and "
                "coef must have the same length"
            )
        return model


def _zscore_topic(x: FloatArray, per_topic: Sequence[bool]) -> FloatArray:
    out = np.array(x, dtype=np.float64, copy=True)
    if out.shape[0] == 0:
        return out
    for j, flag in enumerate(per_topic):
        if flag:
            col = out[:, j]
            sd = float(col.std())
            out[:, j] = (col - col.mean()) / sd if sd > 1e-12 else 0.0
    return out


def _standardise(
    topics: Mapping[str, FloatArray],
    per_topic: Sequence[bool],
    center: Sequence[float],
    scale: Sequence[float],
) -> dict[str, FloatArray]:
    out = {}
    for qid in sorted(topics):
        z = _zscore_topic(topics[qid], per_topic)
        for j, flag in enumerate(per_topic):
            if not flag:
                z[:, j] = (z[:, j] - center[j]) / scale[j]
        out[qid] = z
    return out


def _check_rows(qid: str, x: FloatArray, width: int) -> None:
    if x.ndim != 2 or x.shape[1] != width:
        raise RelevanceModelError(
            f"topic {qid}: expected a features matrix with {width} columns, "
            f"got shape {x.shape}"
        )
    if not np.all(np.isfinite(x)):
        raise RelevanceModelError(f"topic {qid}: features must be finite")


def logistic_fit(
    x: FloatArray, y: npt.NDArray[np.int64], w: FloatArray, c: float
) -> tuple[FloatArray, float]:
    """L2-penalised weighted logistic regression by Newton's method: minimises
    ``C · Σ w_i · logloss_i + ½ |β|²`` (intercept not penalised; scikit-learn's
    ``LogisticRegression(C=C)`` objective). A handful of iterations on a few columns:
    milliseconds for 100,000 rows."""
    n, d = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    penalty = np.full(d + 1, 1.0 / c)
    penalty[-1] = 0.0
    beta = np.zeros(d + 1)
    target = y.astype(np.float64)
    for _ in range(100):
        p = _sigmoid(design @ beta)
        gradient = design.T @ (w * (p - target)) + penalty * beta
        curvature = w * p * (1.0 - p)
        hessian = (design * curvature[:, None]).T @ design + np.diag(penalty)
        hessian[np.diag_indices_from(hessian)] += 1e-10
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return beta[:-1].copy(), float(beta[-1])


def _sigmoid(z: FloatArray) -> FloatArray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)), dtype=np.float64)


def model_fit(
    topics: Mapping[str, TopicRows],
    *,
    weights: Mapping[str, FloatArray] | None = None,
    feature_names: Sequence[str] = FEATURE_NAMES,
    c: float | None = None,
    folds: int = 5,
    pool_relevant: float | None = None,
    ablate: Sequence[str] = (),
) -> RelevanceModel:
    """Fit on ``{qid: (raw features, labels)}``, labels 1 / 0 for judged documents and
    -1 for unjudged ones (which count for the per-topic z-scores only).

    ``pool_relevant``: an estimate of the number of relevant documents over all the
    rows (e.g. :func:`horvitz_thompson_relevant` of a probability sample); the fitted
    model is then anchored to it (:func:`anchor_shift`): its expected count, judged
    labels plus p of the unjudged rows, equals that estimate.

    ``c`` is the inverse L2 strength; None chooses it from :data:`C_GRID` by
    cross-validation over the topic folds (:func:`select_c`). ``weights`` (per topic,
    one per row) weight the judged rows, e.g. ``1 / inclusion probability`` of a
    sample; they are rescaled to mean 1. Calibration: Platt scaling
    on out-of-fold logits, ``folds`` groups of topics (none with fewer than 2 topics
    having both labels). Raises :class:`RelevanceModelError` without judged documents
    of both labels.

    ``ablate``: feature families (:mod:`nuggets_app.learning.ablation`) left out of
    the regression; their columns get a coefficient of 0.
    """
    names = tuple(feature_names)
    ablate = ablate_parse(ablate)
    kept = kept_columns(names, ablate)
    # A judge's grade means the same on every topic: scaled over all rows.
    per_topic = tuple(
        n not in TOPIC_FEATURES and not n.startswith(JUDGE_PREFIX) for n in names
    )
    raw, labels = _topic_arrays(topics, len(names))
    judged = np.concatenate([y >= 0 for y in labels.values()]) if labels else None
    all_raw = np.vstack(list(raw.values())) if raw else np.zeros((0, len(names)))
    if judged is None or not judged.any():
        raise RelevanceModelError("no judged document to fit the relevance model on")
    rows = all_raw[judged]
    center = tuple(
        float(rows[:, j].mean()) if not flag else 0.0
        for j, flag in enumerate(per_topic)
    )
    scale = tuple(
        max(float(rows[:, j].std()), 1e-6) if not flag else 1.0
        for j, flag in enumerate(per_topic)
    )
    z = _standardise(raw, per_topic, center, scale)
    x_fit, y_fit, w_fit, group_fit = _judged_rows(z, labels, weights)
    if not np.all(np.isfinite(w_fit)) or np.any(w_fit < 0):
        raise RelevanceModelError("weights must be finite and >= 0")
    w_fit = w_fit * (len(w_fit) / max(float(w_fit.sum()), 1e-12))
    if len(set(y_fit.tolist())) < 2:
        raise RelevanceModelError(
            "the relevance model needs judged relevant and non-relevant documents"
        )
    full_width = x_fit.shape[1]
    if ablate:
        x_fit = x_fit[:, kept]
    if c is None:
        c = select_c(x_fit, y_fit, w_fit, group_fit, folds)
    coef, intercept = logistic_fit(x_fit, y_fit, w_fit, c)
    calibration = _calibrate(x_fit, y_fit, w_fit, group_fit, c, folds, coef, intercept)
    if ablate:
        coef = _spread(coef, kept, full_width)
    shift = 0.0
    if pool_relevant is not None:
        slope, offset = calibration
        logits = {q: slope * (z[q] @ coef + intercept) + offset for q in z}
        shift = anchor_shift(logits, labels, pool_relevant)
    return RelevanceModel(
        feature_names=names,
        per_topic=per_topic,
        center=center,
        scale=scale,
        coef=tuple(float(v) for v in coef),
        intercept=intercept,
        calibration=calibration,
        c=c,
        fitted_rows=len(y_fit),
        shift=shift,
        ablate=ablate,
    )


def _topic_arrays(
    topics: Mapping[str, TopicRows], width: int
) -> tuple[dict[str, FloatArray], dict[str, npt.NDArray[np.int64]]]:
    """``{qid: raw features}`` and ``{qid: labels}`` of ``topics``, in qid order,
    checked: ``width`` finite columns and one label per row."""
    raw: dict[str, FloatArray] = {}
    labels: dict[str, npt.NDArray[np.int64]] = {}
    for qid in sorted(topics):
        x, y = topics[qid]
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        _check_rows(qid, x, width)
        if y.shape != (x.shape[0],):
            raise RelevanceModelError(
                f"topic {qid}: {x.shape[0]} feature rows but {y.shape} labels"
            )
        raw[qid], labels[qid] = x, y
    return raw, labels


def _judged_rows(
    z: Mapping[str, FloatArray],
    labels: Mapping[str, npt.NDArray[np.int64]],
    weights: Mapping[str, FloatArray] | None,
) -> tuple[FloatArray, npt.NDArray[np.int64], FloatArray, npt.NDArray[np.int64]]:
    """The judged rows the regression is fitted on: standardised features, labels
    (1 relevant), weights (1 where none are given) and each row's topic index (the
    cross-validation folds group by it)."""
    xs, ys, ws, groups = [], [], [], []
    for index, qid in enumerate(sorted(z)):
        keep = labels[qid] >= 0
        xs.append(z[qid][keep])
        ys.append(labels[qid][keep])
        w = (
            np.asarray(weights[qid], dtype=np.float64)[keep]
            if weights is not None and qid in weights
            else np.ones(int(keep.sum()))
        )
        ws.append(w)
        groups.append(np.full(int(keep.sum()), index))
    y_fit = (np.concatenate(ys) > 0).astype(np.int64)
    return np.vstack(xs), y_fit, np.concatenate(ws), np.concatenate(groups)


def _spread(coef: FloatArray, kept: Sequence[int], width: int) -> FloatArray:
    """Coefficients of the kept columns placed among zeros for the left-out ones."""
    out = np.zeros(width)
    out[list(kept)] = coef
    return out


# The anchoring shift is searched in [-SHIFT_BOUND, SHIFT_BOUND] logits (a factor of
# e^20 on the odds): beyond it the target is out of the model's reach and the bound is
# kept, rather than pushing every probability to exactly 0 or 1.
SHIFT_BOUND = 20.0


def horvitz_thompson_relevant(
    labels: Mapping[str, npt.NDArray[np.int64]],
    inverse_inclusion: Mapping[str, FloatArray],
) -> float:
    """Horvitz-Thompson estimate of the number of relevant documents of the pools,
    ``Σ y / π`` over the judged rows (labels 1 / 0; -1 unjudged), ``inverse_inclusion``
    giving ``1 / π`` per row: the sum over topics of statAP's estimated R. Unbiased
    when the judged rows are a probability sample of the pools drawn with those
    inclusion probabilities."""
    total = 0.0
    for qid in sorted(labels):
        y = np.asarray(labels[qid], dtype=np.int64)
        w = np.asarray(inverse_inclusion[qid], dtype=np.float64)
        if w.shape != y.shape:
            raise RelevanceModelError(
                f"topic {qid}: {y.shape[0]} labels but {w.shape[0]} inclusion weights"
            )
        total += float(np.sum(w[y > 0]))
    return total


def anchor_shift(
    logits: Mapping[str, FloatArray],
    labels: Mapping[str, npt.NDArray[np.int64]],
    target: float,
) -> float:
    """The one logit shift ``δ``, common to every topic, with
    ``Σ judged y + Σ unjudged sigmoid(logit + δ) = target``.

    The left side increases with ``δ``, so the root is unique; it is found by
    Newton's method safeguarded by bisection; a target below (above) what the shift can reach within
    ±:data:`SHIFT_BOUND` gives the bound. A shift adds the same amount to every
    logit: rankings within and across topics are unchanged, only the totals move.
    0 without unjudged rows."""
    if not math.isfinite(target):
        raise RelevanceModelError(f"the anchoring target must be finite, got {target}")
    judged_relevant = 0
    parts = []
    for qid in sorted(logits):
        y = np.asarray(labels[qid], dtype=np.int64)
        judged_relevant += int(np.sum(y > 0))
        parts.append(np.asarray(logits[qid], dtype=np.float64)[y < 0])
    unjudged = np.concatenate(parts) if parts else np.zeros(0)
    if unjudged.size == 0:
        return 0.0

    def excess(delta: float) -> float:
        return judged_relevant + float(np.sum(_sigmoid(unjudged + delta))) - target

    if excess(-SHIFT_BOUND) >= 0:
        return -SHIFT_BOUND
    if excess(SHIFT_BOUND) <= 0:
        return SHIFT_BOUND
    # Newton's method on ln Σ p = ln(target - judged relevant), nearly linear in the
    # shift while the p are small (Σ p ≈ e^δ Σ e^logit), or, when most unjudged rows
    # must be relevant, on -ln Σ (1 - p) for the same reason; bisecting when a step
    # would leave the bracket: a few passes over the rows (brentq needs about 15).
    wanted = target - judged_relevant
    mostly = wanted > unjudged.size / 2
    goal = math.log(unjudged.size - wanted if mostly else wanted)
    low, high, delta = -SHIFT_BOUND, SHIFT_BOUND, 0.0
    for _ in range(200):
        p = _sigmoid(unjudged + delta)
        total = float(np.sum(1.0 - p if mostly else p))
        value = math.log(total) - goal if total > 0 else -math.inf
        if mostly:
            value = -value
        if value > 0:
            high = delta
        else:
            low = delta
        slope = float(np.sum(p * (1.0 - p))) / total if total > 0 else 0.0
        step = delta - value / slope if slope > 0 else math.nan
        following = step if low <= step <= high else 0.5 * (low + high)
        if abs(following - delta) < 1e-10 or high - low < 1e-10:
            return following
        delta = following
    return delta


C_GRID: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def _fold_index(
    groups: npt.NDArray[np.int64], folds: int
) -> npt.NDArray[np.int64] | None:
    """Fold of every row (topics dealt round-robin), None below two folds."""
    topics = np.unique(groups)
    k = min(folds, len(topics))
    if k < 2:
        return None
    fold_of = {int(t): i % k for i, t in enumerate(topics.tolist())}
    return np.array([fold_of[int(g)] for g in groups.tolist()], dtype=np.int64)


def select_c(
    x: FloatArray,
    y: npt.NDArray[np.int64],
    w: FloatArray,
    groups: npt.NDArray[np.int64],
    folds: int,
    grid: Sequence[float] = C_GRID,
) -> float:
    """The inverse L2 strength of ``grid`` with the best out-of-fold weighted
    log-likelihood, folds being groups of topics (as for calibration): with few judged
    relevant documents per topic the weights of a lightly penalised fit follow the
    noise of the few training rows, and a stronger penalty wins on held-out topics;
    with many the weak penalty wins. Ties go to the smaller C (the simpler model).
    The largest C of the grid when folds cannot be formed."""
    fold = _fold_index(groups, folds)
    if fold is None:
        return float(max(grid))
    best, best_c = -math.inf, float(max(grid))
    for c in sorted(grid):
        logits = np.zeros(len(y))
        for f in np.unique(fold).tolist():
            train = fold != f
            if len(set(y[train].tolist())) < 2:
                return float(max(grid))
            cf, icpt = logistic_fit(x[train], y[train], w[train], c)
            logits[~train] = x[~train] @ cf + icpt
        p = np.clip(_sigmoid(logits), 1e-12, 1.0 - 1e-12)
        score = float(np.sum(w * (y * np.log(p) + (1 - y) * np.log(1.0 - p))))
        if score > best + 1e-9:
            best, best_c = score, c
    return best_c


def _calibrate(
    x: FloatArray,
    y: npt.NDArray[np.int64],
    w: FloatArray,
    groups: npt.NDArray[np.int64],
    c: float,
    folds: int,
    coef: FloatArray,
    intercept: float,
) -> tuple[float, float]:
    """Platt (slope, offset) on out-of-fold logits; identity when folds cannot be
    formed (fewer than two topics, or a fold's training part lacks a label)."""
    fold = _fold_index(groups, folds)
    if fold is None:
        return 1.0, 0.0
    logits = np.zeros(len(y))
    for f in np.unique(fold).tolist():
        train = fold != f
        if len(set(y[train].tolist())) < 2:
            return 1.0, 0.0
        cf, icpt = logistic_fit(x[train], y[train], w[train], c)
        logits[~train] = x[~train] @ cf + icpt
    slope, offset = logistic_fit(logits.reshape(-1, 1), y, w, 1e4)
    if not slope[0] > 0:
        return 1.0, 0.0
    return float(slope[0]), offset


def model_logits(
    model: RelevanceModel, topics: Mapping[str, FloatArray | TopicRows]
) -> dict[str, FloatArray]:
    """Calibrated logits per topic (see :func:`model_predict`)."""
    raw: dict[str, FloatArray] = {}
    for qid, value in topics.items():
        x = value[0] if isinstance(value, tuple) else value
        x = np.asarray(x, dtype=np.float64)
        _check_rows(qid, x, len(model.feature_names))
        raw[qid] = x
    z = _standardise(raw, model.per_topic, model.center, model.scale)
    coef = np.asarray(model.coef)
    slope, offset = model.calibration
    return {
        qid: slope * (z[qid] @ coef + model.intercept) + offset + model.shift
        for qid in z
    }


def model_predict(
    model: RelevanceModel, topics: Mapping[str, FloatArray | TopicRows]
) -> dict[str, FloatArray]:
    """Probability of relevance of every row, ``{qid: array in [0, 1]}``; ``topics``
    maps qid to raw features (or ``(features, labels)``; labels are ignored). The
    per-topic z-scores are those of the rows given, so pass a topic's whole pool."""
    return {
        qid: np.clip(_sigmoid(z), 0.0, 1.0)
        for qid, z in model_logits(model, topics).items()
    }
