"""Unpooled documents scored beside a pool: the pool's own z-scores, the fold's model."""

from __future__ import annotations

import numpy as np
import pytest

from nuggets_app.learning.crossfit import crossfit_predict
from nuggets_app.learning.relevance_features import FEATURE_NAMES, RelevanceModelError
from nuggets_app.learning.relevance_model import model_fit, model_predict
from nuggets_app.learning.unpooled import crossfit_beside_pool, predict_beside_pool

from .test_crossfit import _topics

WIDTH = len(FEATURE_NAMES)


def test_a_pooled_document_scored_as_unpooled_gets_its_pooled_p():
    topics, weights = _topics(3)
    model = model_fit(topics, weights=weights)
    pooled = model_predict(model, topics)
    for qid, (x, _) in topics.items():
        again = predict_beside_pool(model, x, x[:5])
        np.testing.assert_allclose(again, pooled[qid][:5], rtol=1e-12, atol=1e-12)


def test_new_documents_do_not_change_each_others_p():
    topics, weights = _topics(4)
    model = model_fit(topics, weights=weights)
    x = topics["1"][0]
    rng = np.random.default_rng(9)
    new = rng.normal(size=(6, WIDTH))
    alone = predict_beside_pool(model, x, new[:1])
    together = predict_beside_pool(model, x, new)
    assert alone[0] == pytest.approx(together[0], abs=1e-15)


def test_each_topic_is_scored_by_its_folds_model():
    topics, weights = _topics(5)
    crossfit = crossfit_predict(topics, weights=weights, c=1.0)
    pool = {q: x for q, (x, _) in topics.items()}
    extra = {q: x[:3] for q, x in pool.items()}
    found = crossfit_beside_pool(crossfit, pool, extra)
    for qid, p in found.items():
        np.testing.assert_allclose(p, crossfit.p[qid][:3], rtol=1e-12, atol=1e-12)
    assert set(found) == set(crossfit.p)
    assert crossfit_beside_pool(crossfit, pool, {"999": pool["1"][:1]}) == {}


def test_non_finite_features_are_refused():
    topics, weights = _topics(6)
    model = model_fit(topics, weights=weights)
    bad = np.full((1, WIDTH), np.nan)
    with pytest.raises(RelevanceModelError, match="finite"):
        predict_beside_pool(model, topics["1"][0], bad)
