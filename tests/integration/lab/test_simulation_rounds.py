"""``simulate --rounds`` on the real ADI collection: the budget spent in rounds, the
report's estimators with the rounds' weights, and the HiCAL-style reference."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from nuggets_app.ir.rounds import round_budgets
from nuggets_app.models import Sample, SampleDocument

ESTIMATORS = {"sample_only", "statap", "eap", "model_assisted"}


def rounds_report(adi, tmp_path, design: str) -> dict:
    collection, qrels = adi
    out = tmp_path / design
    call_command(
        "simulate",
        collection=collection.name,
        qrels=str(qrels),
        depth=30,
        sample_size="20%",
        seed=2,
        rounds=3,
        round_design=design,
        out=str(out),
        stdout=open("/dev/null", "w"),  # noqa: SIM115
        stderr=open("/dev/null", "w"),  # noqa: SIM115
    )
    return json.loads((out / "report.json").read_text())


@pytest.mark.django_db
def test_simulate_rounds_spends_the_budget_in_rounds_with_unbiased_weights(
    adi, tmp_path
):
    report = rounds_report(adi, tmp_path, "model")
    assert report["default_estimator"] == "model_assisted"
    assert set(report["estimators"]) == ESTIMATORS
    rounds = report["rounds"]
    assert (rounds["rounds"], rounds["design"]) == (3, "model")
    sample = Sample.objects.get(name__startswith="sim-rounds3-model")
    assert sample.rounds_drawn == 3
    assert sample.size == rounds["budget"]
    topics = len(sample.draws)
    budgets = round_budgets(rounds["budget"], 3)
    # every round drew its budget in every topic (pools are larger than the budget)
    assert rounds["judged_per_round"] == [b * topics for b in budgets]
    assert report["judged"] == sum(budgets) * topics
    rows = SampleDocument.objects.filter(sample=sample)
    assert all(0 < r.inclusion_prob <= 1 and r.var_weight is not None for r in rows)
    for name in ("statap", "model_assisted"):
        coverage = report["estimators"][name]["coverage"]
        assert coverage is not None
        assert 0 <= coverage <= 1


@pytest.mark.django_db
def test_top_p_rounds_give_every_judged_document_weight_one(adi, tmp_path):
    report = rounds_report(adi, tmp_path, "top")
    assert report["rounds"]["design"] == "top"
    sample = Sample.objects.get(name__startswith="sim-rounds3-top")
    assert SampleDocument.objects.filter(sample=sample, round__gt=1).exists()
    rows = SampleDocument.objects.filter(sample=sample)
    assert {r.inclusion_prob for r in rows} == {1.0}
