"""The reliability diagram of a relevance model: each judged document's p from a
model fitted without its fold, binned against the observed rate of relevance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from nuggets_app.learning import relevance_features, relevance_model

RELIABILITY_BINS = 10
CV_FOLDS = 5


def reliability_cv(
    data: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    weights: dict[str, np.ndarray] | None = None,
    folds: int = CV_FOLDS,
    bins: int = RELIABILITY_BINS,
    pool_relevant: float | None = None,
    ablate: Sequence[str] = (),
    feature_names: Sequence[str] = relevance_features.FEATURE_NAMES,
) -> dict[str, Any]:
    """Observed rate of relevance per p bin of :func:`heldout_predictions`."""
    held = heldout_predictions(
        data,
        weights=weights,
        folds=folds,
        pool_relevant=pool_relevant,
        ablate=ablate,
        feature_names=feature_names,
    )
    return reliability_bins(held, bins=bins)


def heldout_predictions(
    data: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    weights: dict[str, np.ndarray] | None = None,
    folds: int = CV_FOLDS,
    pool_relevant: float | None = None,
    ablate: Sequence[str] = (),
    feature_names: Sequence[str] = relevance_features.FEATURE_NAMES,
) -> list[tuple[float, int]]:
    """``(p, label)`` of every judged document, its p predicted by a model fitted
    without its fold (folds: judged documents in order, round robin).
    ``pool_relevant``: the whole sample's estimate the model is anchored to; each
    fold's model is anchored to it too, its held-out documents counting as unjudged.
    ``ablate``: feature families left out of every fold's fit; ``feature_names``:
    the columns of the rows (the lexical features, then the semantic ones if any)."""
    held: list[tuple[float, int]] = []
    for fold in range(folds):
        masked = {}
        targets: dict[str, np.ndarray] = {}
        for qid, (matrix, labels) in data.items():
            judged = np.flatnonzero(labels >= 0)
            out = judged[np.arange(len(judged)) % folds == fold]
            train = labels.copy()
            train[out] = -1
            masked[qid] = (matrix, train)
            targets[qid] = out
        if not any(len(v) for v in targets.values()):
            continue
        try:
            model = relevance_model.model_fit(
                masked,
                weights=weights,
                pool_relevant=pool_relevant,
                ablate=ablate,
                feature_names=feature_names,
            )
        except relevance_features.RelevanceModelError:
            continue
        predicted = relevance_model.model_predict(model, masked)
        for qid, out in targets.items():
            for i in out.tolist():
                held.append((float(predicted[qid][i]), int(data[qid][1][i])))
    return held


def reliability_bins(
    held: Sequence[tuple[float, int]], *, bins: int = RELIABILITY_BINS
) -> dict[str, Any]:
    """Per bin of p (b/B <= p < (b+1)/B, p = 1 in the last): documents, mean p,
    observed rate of relevance; and the Brier score and expected calibration error."""
    rows = []
    n = len(held)
    ece = 0.0
    for b in range(bins):
        members = [(p, y) for p, y in held if min(int(p * bins), bins - 1) == b]
        count = len(members)
        mean_p = sum(p for p, _ in members) / count if count else None
        rate = sum(y for _, y in members) / count if count else None
        if count and mean_p is not None and rate is not None:
            ece += count / n * abs(mean_p - rate)
        rows.append(
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "n": count,
                "mean_p": mean_p,
                "rate": rate,
            }
        )
    brier = sum((p - y) ** 2 for p, y in held) / n if n else None
    return {"bins": rows, "n": n, "brier": brier, "ece": ece if n else None}
