"""Dashboard pages: who may see them, and that every page, table and plot renders."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db
RULE = "kind=threshold&threshold=0.5&n=100"


def _urls(world) -> list[str]:
    pk, job, qrels = world.collection.pk, world.job.pk, world.qrels.pk
    runs = f"qrels=qrels:{qrels}&{RULE}&measures=AP+P@10&sample={world.sample.pk}"
    compare = f"qrels_a=qrels:{qrels}&qrels_b=merged:{job}&measure=AP&{RULE}"
    trust = f"job={job}&human=human&{RULE}&bins=10&length_bins=10"

    def page(name: str) -> str:
        return reverse("evaluation-page", args=[pk, name])

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


@pytest.mark.parametrize("persona", ["staff", "researcher"])
def test_staff_and_researchers_see_every_page_table_and_plot(
    client, world, persona, request
):
    client.force_login(request.getfixturevalue(persona))
    for url in _urls(world):
        response = client.get(url)
        assert response.status_code == 200, url
        if "/plot/" in url:
            svg = ".svg" in url
            assert response["Content-Type"] == ("image/svg+xml" if svg else "image/png")
            assert response.content.startswith(b"<?xml" if svg else b"\x89PNG")
        elif "/csv/" in url:
            assert response["Content-Type"] == "text/csv"


@pytest.mark.parametrize("persona", ["assessor", "other_assessor"])
def test_assessors_are_refused_everywhere(client, world, persona, request):
    client.force_login(request.getfixturevalue(persona))
    for url in _urls(world):
        assert client.get(url).status_code == 403, url
    post = client.post(reverse("verification-create", args=[world.collection.pk]))
    assert post.status_code == 403


def test_anonymous_users_are_sent_to_log_in(client, world):
    for url in _urls(world):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login"))


def test_pages_are_readable_without_javascript(staff_client, world):
    pk, job = world.collection.pk, world.job.pk
    url = reverse("evaluation-page", args=[pk, "trust"])
    html = staff_client.get(f"{url}?job={job}&human=human&{RULE}").content.decode()
    assert "<script" not in html
    for name in ("matcher_map", "do_hsa", "length_bias", "length_tests"):
        assert f'id="table-{name}"' in html
        assert f"csv/{name}?" in html
    for plot in ("matcher_map", "histograms", "length_bias"):
        assert f"plot/{plot}.svg?" in html
        assert f"plot/{plot}.png?" in html


def test_a_first_visit_computes_with_the_default_choices(staff_client, world):
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    html = staff_client.get(url).content.decode()
    assert 'id="table-evaluation"' in html
    assert "kidus-hw1-bm25" in html


def test_an_unknown_qrels_source_is_shown_not_crashed(staff_client, world):
    url = reverse("evaluation-page", args=[world.collection.pk, "compare"])
    query = f"qrels_a=human&qrels_b=inferred:{world.job.pk + 99}&measure=AP&{RULE}"
    response = staff_client.get(f"{url}?{query}")
    assert response.status_code == 200
    assert b"Select a valid choice" in response.content
    assert staff_client.get(f"{url}csv/comparison?{query}").status_code == 404


def test_an_unknown_measure_is_a_form_error(staff_client, world):
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    response = staff_client.get(f"{url}?qrels=human&{RULE}&measures=NoSuchMeasure")
    assert b"unknown measure" in response.content
