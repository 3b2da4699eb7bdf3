"""What a job's nuggets contribute (``evaluation.services.ablation``): the model's
held-out log-loss and the default estimate's interval width with and without the
nugget features, and the job page's card that shows them on demand."""

from __future__ import annotations

import math

import pytest
from django.urls import reverse

from nuggets_app.evaluation.selectors import collection_runs
from nuggets_app.evaluation.services.ablation import log_loss, nugget_contribution
from nuggets_app.evaluation.services.estimates import job_sample_estimates
from nuggets_app.models import JobInference, Judgment

pytestmark = pytest.mark.django_db


def test_log_loss_is_the_mean_negative_log_likelihood():
    held = [(0.8, 1), (0.25, 0), (0.5, 1)]
    expected = -(math.log(0.8) + math.log(0.75) + math.log(0.5)) / 3
    assert log_loss(held) == pytest.approx(expected)
    assert log_loss([]) is None


def test_the_job_is_measured_with_and_without_its_nuggets(fitted):
    world = fitted
    result = nugget_contribution(job_id=world.job.pk)

    with_, without = result["variants"]
    assert (with_["features"], with_["ablate"]) == ("with nuggets", [])
    assert (without["features"], without["ablate"]) == ("without nuggets", ["nuggets"])
    # Every judged document is predicted once, by a model that did not see it, as
    # in the card's reliability diagram.
    judged = Judgment.objects.filter(topic__collection=world.collection).count()
    reliability = JobInference.objects.get(job=world.job).fit_info["reliability"]
    assert with_["judged"] == without["judged"] == judged == reliability["n"]
    for row in (with_, without):
        assert 0.0 < row["logloss"] < 2.0
        assert row["runs"] == len(world.file_runs)
        assert 0.0 < row["width"] <= 1.0
    assert with_["logloss"] != without["logloss"]
    # The variant the job's fit kept (its nugget choice, by the same log-losses)
    # has the default estimate's width as the runs page shows it.
    choice = JobInference.objects.get(job=world.job).fit_info["nugget_choice"]
    kept = with_ if choice["kept"] else without
    assert choice["kept"] is (result["verdict"] == "pay")
    shown = job_sample_estimates(
        job=world.job, sample=world.sample, runs=collection_runs(world.collection)
    )
    widths = [e.ap.ci95[1] - e.ap.ci95[0] for e in shown.values()]
    assert kept["width"] == pytest.approx(sum(widths) / len(widths))
    assert result["sample"] == world.sample.name
    gain = without["logloss"] - with_["logloss"]
    assert result["verdict"] == (
        "nothing" if abs(gain) < 0.002 else "pay" if gain > 0 else "hurt"
    )


def test_the_card_measures_on_demand_and_keeps_the_result(client, fitted, researcher):
    world = fitted
    client.force_login(researcher)
    detail = reverse("job-detail", args=[world.job.pk])

    before = client.get(detail).content.decode()
    assert "Measure what the nuggets contribute" in before
    assert "without nuggets" not in before
    progress = reverse("job-nugget-value-progress", args=[world.job.pk])
    assert client.get(progress).json() == {"status": "none"}

    response = client.post(reverse("job-nugget-value", args=[world.job.pk]))
    assert response.status_code == 302
    assert response["Location"].endswith("#relevance-model")
    after = client.get(detail).content.decode()
    assert "without nuggets" in after
    assert "Held-out log-loss" in after
    assert "data-verdict=" in after
    assert client.get(progress).json()["status"] == "done"


@pytest.mark.parametrize("persona", ["assessor", "other_assessor"])
def test_assessors_cannot_start_the_measure(client, fitted, persona, request):
    client.force_login(request.getfixturevalue(persona))
    url = reverse("job-nugget-value", args=[fitted.job.pk])
    assert client.post(url).status_code == 403
