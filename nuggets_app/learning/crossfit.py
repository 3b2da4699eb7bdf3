"""Cross-fitted probabilities of relevance: each topic predicted by a model that did not
see that topic's labels.

The model-assisted estimator (:mod:`nuggets_app.ir.model_assisted`) is unbiased only
when a topic's ``p`` does not depend on that topic's sample. The model fitted on every
topic (:func:`nuggets_app.learning.relevance_model.model_fit`) saw the judged documents it then
scores, so its ``p`` of a judged document leans towards the document's label and the
estimator drifts towards EAP. :func:`crossfit_predict` deals the topics into
``folds`` groups (numeric qid order, round robin: deterministic) and, for each group,
fits the model on the other groups only and predicts every pooled document of the
group, judged ones included.

Each fold's fit is the full fit's recipe on fewer topics: the same features, the same
inverse L2 strength ``c`` (given, not re-selected), the same weights (``1/π`` of a
statAP sample), Platt calibration on out-of-fold logits *within* the training topics,
and, when the full fit was anchored, anchoring to the Horvitz-Thompson estimate of the
relevant pooled documents of the *training* topics only (their judged labels plus the p
of their unjudged rows add up to it). Calibration and anchoring inside the training
folds keep ``p`` calibrated on average (the held-out topics are a random fifth of the
same kind of topics) while nothing of the held-out topic's labels reaches the model.

What remains of the held-out topic in its own ``p`` is the features: a document's
features exclude its own label and nuggets (leave-one-out, see
:mod:`nuggets_app.learning.relevance_model`) but use the topic's other judged documents (feedback,
similarities, prevalence, nuggets). ``p_d`` is therefore independent of ``y_d`` but
not of the rest of the topic's sample: a bias of order ``1/n`` in the estimator, not 0
(docs/explanation/model-assisted.md, "What the model's p must satisfy").

A fold whose training topics lack a judged relevant or a judged non-relevant document
cannot be fitted; its topics get no ``p`` (they are left out of the result, which the
estimator reads as ``p ≡ 0``: statAP for those topics). Pure and Django-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nuggets_app.ir.prels import topic_key
from nuggets_app.learning.relevance_features import (
    FEATURE_NAMES,
    FloatArray,
    RelevanceModelError,
)
from nuggets_app.learning.relevance_model import (
    RelevanceModel,
    TopicRows,
    horvitz_thompson_relevant,
    model_fit,
    model_predict,
)

CROSSFIT_FOLDS = 5


@dataclass(frozen=True)
class CrossFit:
    """Cross-fitted ``p`` per topic (rows in the input order), the fold of every
    topic, and the topics whose fold could not be fitted (absent from ``p``)."""

    p: dict[str, FloatArray]
    fold_of: dict[str, int]
    unfitted: tuple[str, ...]
    models: tuple[RelevanceModel | None, ...]


def topic_folds(qids: Sequence[str], folds: int = CROSSFIT_FOLDS) -> dict[str, int]:
    """Fold of every topic: numeric qid order, dealt round robin (at most one fold per
    topic; deterministic whatever the input order)."""
    if folds < 2:
        raise RelevanceModelError(f"cross-fitting needs at least 2 folds, got {folds}")
    ordered = sorted(set(qids), key=topic_key)
    return {qid: i % folds for i, qid in enumerate(ordered)}


def crossfit_predict(
    topics: Mapping[str, TopicRows],
    *,
    weights: Mapping[str, FloatArray] | None = None,
    c: float,
    anchored: bool = False,
    folds: int = CROSSFIT_FOLDS,
    feature_names: Sequence[str] = FEATURE_NAMES,
    ablate: Sequence[str] = (),
) -> CrossFit:
    """``p`` of every row of every topic from a model fitted on the other folds.

    ``topics`` maps qid to ``(raw features, labels)`` as :func:`model_fit` takes them
    (1 / 0 judged, -1 unjudged); ``weights`` per row (``1/π`` of the sampled rows, 1
    elsewhere); ``c`` the full fit's inverse L2 strength; ``anchored``: anchor each
    fold's model to the Horvitz-Thompson estimate of its training topics (``weights``
    are then the inverse inclusion probabilities), as the full fit of a fully judged
    statAP sample is anchored to all topics'. ``ablate``: feature families left out
    of every fold's fit, as of the full fit's.
    """
    fold_of = topic_folds(list(topics), folds)
    p: dict[str, FloatArray] = {}
    unfitted: list[str] = []
    models: list[RelevanceModel | None] = []
    for fold in range(min(folds, len(fold_of))):
        held = [q for q, f in fold_of.items() if f == fold]
        train = {q: rows for q, rows in topics.items() if fold_of[q] != fold}
        train_weights = (
            {q: w for q, w in weights.items() if q in train} if weights else None
        )
        target = None
        if anchored:
            if train_weights is None:
                raise RelevanceModelError("anchoring needs the inclusion weights")
            target = horvitz_thompson_relevant(
                {q: np.asarray(y) for q, (_, y) in train.items()}, train_weights
            )
        try:
            model = model_fit(
                train,
                weights=train_weights,
                feature_names=feature_names,
                c=c,
                pool_relevant=target,
                ablate=ablate,
            )
        except RelevanceModelError:
            unfitted.extend(held)
            models.append(None)
            continue
        models.append(model)
        p.update(model_predict(model, {q: topics[q] for q in held}))
    return CrossFit(
        p=p,
        fold_of=fold_of,
        unfitted=tuple(sorted(unfitted, key=topic_key)),
        models=tuple(models),
    )


def crossfit_by_docno(
    crossfit: CrossFit, docnos: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, float]]:
    """``{qid: {docno: p}}`` from the rows' document names (as the estimator takes
    them); unfitted topics are absent."""
    return {
        qid: dict(zip(docnos[qid], (float(v) for v in values), strict=True))
        for qid, values in crossfit.p.items()
    }
