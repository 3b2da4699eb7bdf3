"""Feature families and the ablated fit of the relevance model."""

from __future__ import annotations

import numpy as np
import pytest

from nuggets_app.learning.ablation import (
    FEATURE_FAMILIES,
    ablate_parse,
    kept_columns,
)
from nuggets_app.learning.crossfit import crossfit_predict
from nuggets_app.learning.relevance_features import (
    FEATURE_NAMES,
    RelevanceModelError,
)
from nuggets_app.learning.relevance_model import (
    RelevanceModel,
    model_fit,
    model_predict,
)
from nuggets_app.learning.semantic_features import SEMANTIC_FEATURE_NAMES

NUGGET_COLUMNS = [0, 5, 6]  # nugget_bm25, minspan_mean, minspan_matched


def _topics(seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    topics = {}
    for q in range(12):
        x = rng.normal(size=(30, len(FEATURE_NAMES)))
        y = (x[:, 0] + x[:, 2] + rng.normal(size=30) > 0).astype(np.int64)
        y[15:] = -1
        topics[str(q + 1)] = (x, y)
    return topics


def test_every_feature_belongs_to_a_family():
    members = set().union(*FEATURE_FAMILIES.values())
    assert set(FEATURE_NAMES) | set(SEMANTIC_FEATURE_NAMES) <= members
    assert members <= set(FEATURE_NAMES) | set(SEMANTIC_FEATURE_NAMES)


def test_the_nugget_family_holds_every_nugget_feature():
    assert FEATURE_FAMILIES["nuggets"] == {
        "nugget_bm25",
        "minspan_mean",
        "minspan_matched",
        "nugget_semantic_max",
        "nugget_semantic_mean",
    }


def test_families_are_parsed_sorted_and_unknown_ones_named():
    assert ablate_parse("topic, nuggets,topic") == ("nuggets", "topic")
    assert ablate_parse("") == ()
    with pytest.raises(RelevanceModelError, match="unknown feature family 'nugget'"):
        ablate_parse("nugget")


def test_ablating_every_family_leaves_nothing_to_fit():
    with pytest.raises(RelevanceModelError, match="leaves no feature"):
        kept_columns(FEATURE_NAMES, FEATURE_FAMILIES)


def test_an_ablated_fit_is_the_fit_on_the_other_columns():
    topics = _topics()
    ablated = model_fit(topics, ablate=["nuggets"])
    kept = [j for j in range(len(FEATURE_NAMES)) if j not in NUGGET_COLUMNS]
    names = [FEATURE_NAMES[j] for j in kept]
    reduced = model_fit({q: (x[:, kept], y) for q, (x, y) in topics.items()},
                        feature_names=names)  # fmt: skip

    assert ablated.ablate == ("nuggets",)
    assert [ablated.coef[j] for j in NUGGET_COLUMNS] == [0.0, 0.0, 0.0]
    assert [ablated.coef[j] for j in kept] == pytest.approx(reduced.coef)
    assert ablated.intercept == pytest.approx(reduced.intercept)
    assert ablated.calibration == pytest.approx(reduced.calibration)
    assert ablated.c == reduced.c
    full = model_predict(ablated, topics)
    less = model_predict(reduced, {q: x[:, kept] for q, (x, _) in topics.items()})
    for qid in topics:
        np.testing.assert_allclose(full[qid], less[qid], rtol=1e-9, atol=1e-12)


def test_the_nugget_features_matter_when_not_ablated():
    topics = _topics()
    assert model_fit(topics).coef[0] > 0.5
    assert model_fit(topics, ablate=["nuggets"]).coef[0] == 0.0


def test_ablation_survives_json_and_is_absent_without_it():
    ablated = model_fit(_topics(), ablate=["nuggets", "topic"])
    assert RelevanceModel.from_json(ablated.to_json()) == ablated
    assert "ablate" not in model_fit(_topics()).to_json()


def test_every_crossfit_fold_leaves_the_family_out():
    result = crossfit_predict(_topics(), c=0.3, ablate=["nuggets"])
    assert result.models
    for model in result.models:
        assert model is not None
        assert [model.coef[j] for j in NUGGET_COLUMNS] == [0.0, 0.0, 0.0]
