"""Probabilities of relevance for documents outside the pool a model was fitted on.

Pure and Django-free. The relevance model (:mod:`nuggets_app.learning.relevance_model`)
z-scores its document features within each topic's pool, so the p of a pooled document
depends on the rest of the pool. A document of a new run that is not in the pool (an
*unpooled* document) is scored on the same scale: its per-topic features are z-scored
with the mean and standard deviation of the topic's *pooled* rows, never with its own
or other new documents, so adding new documents changes no pooled document's p and a
new document's p does not depend on which other new documents arrive with it.

With a cross-fitted model (:class:`nuggets_app.learning.crossfit.CrossFit`), a topic's
new documents are scored by the model of the topic's fold, the one that never saw the
topic's labels, as its pooled documents are (:func:`crossfit_beside_pool`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from nuggets_app.learning.crossfit import CrossFit
from nuggets_app.learning.relevance_features import FloatArray, RelevanceModelError
from nuggets_app.learning.relevance_model import RelevanceModel


def predict_beside_pool(
    model: RelevanceModel, pool: FloatArray, extra: FloatArray
) -> FloatArray:
    """p of the ``extra`` rows (raw features) of one topic whose pooled rows are
    ``pool``: per-topic features z-scored with the pool's mean and sd (a feature
    constant over the pool becomes 0, as in the fit), then the model's calibrated
    logit, shift and sigmoid."""
    width = len(model.feature_names)
    pool = np.asarray(pool, dtype=np.float64).reshape(-1, width)
    extra = np.asarray(extra, dtype=np.float64).reshape(-1, width)
    if not np.all(np.isfinite(extra)):
        raise RelevanceModelError("features of unpooled documents must be finite")
    z = extra.copy()
    for j, per_topic in enumerate(model.per_topic):
        if per_topic:
            column = pool[:, j] if len(pool) else extra[:, j]
            sd = float(column.std())
            mean = float(column.mean()) if len(column) else 0.0
            z[:, j] = (extra[:, j] - mean) / sd if sd > 1e-12 else 0.0
        else:
            z[:, j] = (extra[:, j] - model.center[j]) / model.scale[j]
    slope, offset = model.calibration
    logits = slope * (z @ np.asarray(model.coef) + model.intercept) + offset
    logits = logits + model.shift
    p: FloatArray = np.clip(1.0 / (1.0 + np.exp(-logits)), 0.0, 1.0)
    return p


def crossfit_beside_pool(
    crossfit: CrossFit,
    pool: Mapping[str, FloatArray],
    extra: Mapping[str, FloatArray],
) -> dict[str, FloatArray]:
    """p of every topic's ``extra`` rows from the model of the topic's fold (topics
    without a fitted fold model, or unknown to the cross-fit, are absent: p = 0)."""
    out: dict[str, FloatArray] = {}
    for qid, rows in extra.items():
        fold = crossfit.fold_of.get(qid)
        if fold is None or fold >= len(crossfit.models):
            continue
        model = crossfit.models[fold]
        if model is None or qid not in pool:
            continue
        out[qid] = predict_beside_pool(model, pool[qid], rows)
    return out
