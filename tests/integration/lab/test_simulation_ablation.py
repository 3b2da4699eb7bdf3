"""``simulate --ablate``: the relevance model fitted without a feature family, on the
real ADI collection."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db

NUGGET_FEATURES = {"nugget_bm25", "minspan_mean", "minspan_matched"}


def _simulate(qrels, out, *extra: str) -> dict:
    call_command(
        "simulate", "--collection", "adi", "--qrels", str(qrels), "--depth", "20",
        "--sample-size", "8", "--seed", "3", "--replace", "--out", str(out), *extra,
    )  # fmt: skip
    return json.loads((out / "report.json").read_text())


def test_ablate_nuggets_fits_without_the_nugget_features_and_says_so(adi, tmp_path):
    _, qrels = adi
    report = _simulate(qrels, tmp_path / "ablated", "--ablate", "nuggets")

    assert report["config"]["ablate"] == ["nuggets"]
    model = report["model"]
    assert model["ablate"] == ["nuggets"]
    coef = dict(zip(model["feature_names"], model["coef"], strict=True))
    assert {n: coef[n] for n in NUGGET_FEATURES} == dict.fromkeys(NUGGET_FEATURES, 0.0)
    assert any(v != 0.0 for n, v in coef.items() if n not in NUGGET_FEATURES)

    plain = _simulate(qrels, tmp_path / "plain", "--keep-nuggets")
    assert plain["config"]["ablate"] == []
    assert plain["config"]["nugget_choice"] is False
    assert "ablate" not in plain["model"]
    assert "nuggets" in plain["families"]["kept"]
    assert any(plain["model"]["coef"][i] != 0.0 for i in (0, 5, 6))


def test_an_unknown_family_is_refused_before_any_work(adi, tmp_path):
    _, qrels = adi
    with pytest.raises(CommandError, match="unknown feature family 'nugget'"):
        _simulate(qrels, tmp_path, "--ablate", "nugget")
    assert not (tmp_path / "report.json").exists()
