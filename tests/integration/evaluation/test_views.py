"""Dashboard pages: who may see them, and that every page, table and plot renders."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _urls(world) -> list[str]:
    pk = world.collection.pk
    job = world.job.pk
    trust = f"job={job}&human=human&kind=threshold&threshold=0.5&n=100&bins=10&length_bins=10"
    runs = f"qrels=qrels:{world.qrels.pk}&kind=threshold&threshold=0.5&n=100&measures=AP&sample={world.sample.pk}"
    compare = f"qrels_a=qrels:{world.qrels.pk}&qrels_b=merged:{job}&measure=AP&kind=threshold&threshold=0.5&n=100"
    page = lambda name: reverse("evaluation-page", args=[pk, name])  # noqa: E731
    return [
        reverse("evaluation-index"),
        page("runs"),
        f"{page('runs')}?{runs}",
        f"{page('runs')}csv/evaluation?{runs}",
        f"{page('runs')}csv/statap?{runs}",
        page("compare"),
        f"{page('compare')}?{compare}",
        f"{page('compare')}csv/comparison?{compare}",
        f"{page('compare')}plot/scatter.svg?{compare}",
        f"{page('compare')}plot/scatter.png?{compare}",
        page("trust"),
        f"{page('trust')}?{trust}",
        f"{page('trust')}csv/matcher_map?{trust}",
        f"{page('trust')}plot/histograms.svg?{trust}",
        f"{page('trust')}plot/length_bias.png?{trust}",
        page("verification"),
        reverse("verification-create", args=[pk]),
    ]


def test_staff_see_every_page_table_and_plot(staff_client, world):
    for url in _urls(world):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        if "plot/" in url:
            kind = "image/svg+xml" if ".svg" in url else "image/png"
            assert response["Content-Type"] == kind
        print(url, len(response.content))
