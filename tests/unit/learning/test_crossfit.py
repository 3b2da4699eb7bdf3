"""Cross-fitted probabilities: deterministic topic folds, a topic's p blind to its own
labels, the full fit's recipe inside each fold (C, weights, anchoring)."""

from __future__ import annotations

import numpy as np
import pytest

from nuggets_app.learning.crossfit import (
    crossfit_by_docno,
    crossfit_predict,
    topic_folds,
)
from nuggets_app.learning.relevance_features import FEATURE_NAMES, RelevanceModelError
from nuggets_app.learning.relevance_model import (
    horvitz_thompson_relevant,
    model_fit,
    model_predict,
)

WIDTH = len(FEATURE_NAMES)


def _topics(seed: int, n_topics: int = 12, pool: int = 30, judged: int = 10):
    """Synthetic pools: relevance follows the first feature; the first ``judged``
    rows of each topic are judged, with inclusion probability 0.4."""
    rng = np.random.default_rng(seed)
    topics, weights = {}, {}
    for t in range(1, n_topics + 1):
        x = rng.normal(size=(pool, WIDTH))
        y_true = (x[:, 0] + rng.normal(scale=0.7, size=pool) > 0.8).astype(np.int64)
        y = np.full(pool, -1, dtype=np.int64)
        y[:judged] = y_true[:judged]
        topics[str(t)] = (x, y)
        w = np.ones(pool)
        w[:judged] = 1 / 0.4
        weights[str(t)] = w
    return topics, weights


def test_folds_deal_topics_in_numeric_order_whatever_the_input_order():
    qids = ["10", "2", "1", "33", "4", "5", "7"]
    assert topic_folds(qids, 3) == {
        "1": 0, "2": 1, "4": 2, "5": 0, "7": 1, "10": 2, "33": 0,
    }  # fmt: skip
    assert topic_folds(list(reversed(qids)), 3) == topic_folds(qids, 3)
    with pytest.raises(RelevanceModelError, match="at least 2 folds"):
        topic_folds(qids, 1)


def test_a_topics_p_does_not_depend_on_its_own_labels():
    topics, weights = _topics(1)
    before = crossfit_predict(topics, weights=weights, c=0.3, anchored=True)
    flipped = dict(topics)
    x, y = topics["3"]
    y2 = y.copy()
    y2[y2 >= 0] = 1 - y2[y2 >= 0]
    flipped["3"] = (x, y2)
    after = crossfit_predict(flipped, weights=weights, c=0.3, anchored=True)
    np.testing.assert_array_equal(before.p["3"], after.p["3"])
    # Another fold's topics were trained on topic 3 and move.
    other = next(q for q, f in before.fold_of.items() if f != before.fold_of["3"])
    assert not np.array_equal(before.p[other], after.p[other])


def test_each_fold_is_the_full_recipe_on_the_other_topics():
    topics, weights = _topics(2)
    result = crossfit_predict(topics, weights=weights, c=0.1, anchored=True)
    assert set(result.p) == set(topics)
    assert result.unfitted == ()
    for fold, model in enumerate(result.models):
        train = {q: r for q, r in topics.items() if result.fold_of[q] != fold}
        held = [q for q in topics if result.fold_of[q] == fold]
        target = horvitz_thompson_relevant(
            {q: y for q, (_, y) in train.items()},
            {q: weights[q] for q in train},
        )
        expected = model_fit(
            train, weights={q: weights[q] for q in train}, c=0.1, pool_relevant=target
        )
        assert model == expected
        assert model.c == 0.1
        # Anchored inside the training topics: their judged labels plus p add up.
        train_p = model_predict(model, train)
        total = sum(
            float(np.sum(y > 0)) + float(np.sum(train_p[q][y < 0]))
            for q, (_, y) in train.items()
        )
        assert total == pytest.approx(target, rel=1e-6)
        for q in held:
            np.testing.assert_allclose(
                result.p[q], model_predict(model, {q: topics[q]})[q]
            )


def test_without_anchoring_no_shift_is_learnt_and_p_follows_the_relevant_feature():
    topics, weights = _topics(3)
    result = crossfit_predict(topics, weights=weights, c=1.0)
    assert all(m is not None and m.shift == 0.0 for m in result.models)
    x = np.vstack([topics[q][0] for q in sorted(topics)])
    p = np.concatenate([result.p[q] for q in sorted(topics)])
    assert np.corrcoef(x[:, 0], p)[0, 1] > 0.8
    assert np.all((p >= 0) & (p <= 1))


def test_a_fold_without_both_labels_to_learn_from_leaves_its_topics_unfitted():
    topics, weights = _topics(4, n_topics=4)
    for q in ("1", "2", "3"):  # only topic 4 has judged relevant documents
        x, y = topics[q]
        topics[q] = (x, np.where(y > 0, 0, y))
    x, y = topics["4"]
    y = y.copy()
    y[0] = 1
    topics["4"] = (x, y)
    result = crossfit_predict(topics, weights=weights, c=1.0, folds=4)
    assert result.unfitted == ("4",)
    assert set(result.p) == {"1", "2", "3"}
    docnos = {q: [f"{q}-{i}" for i in range(30)] for q in topics}
    named = crossfit_by_docno(result, docnos)
    assert set(named) == {"1", "2", "3"}
    assert named["1"]["1-0"] == pytest.approx(float(result.p["1"][0]))


def test_anchoring_without_weights_is_refused():
    topics, _ = _topics(5)
    with pytest.raises(RelevanceModelError, match="inclusion weights"):
        crossfit_predict(topics, c=1.0, anchored=True)
