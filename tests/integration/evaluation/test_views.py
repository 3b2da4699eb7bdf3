"""Dashboard pages: who may see them, and that every page, table and chart renders."""

import csv
import io

import pytest
from django.urls import reverse

from nuggets_app.models import Run
from nuggets_app.pooling.services.samples import sample_draw
from tests.factories import UserFactory
from tests.integration.worlds.judged_job import _judge as judge_sample
from tests.svg_charts import axis, chart_root, child, groups, svg_element

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
        page("trust"),
        f"{page('trust')}?{trust}",
        f"{page('trust')}csv/matcher_map?{trust}",
        f"{page('trust')}plot/histograms.svg?{trust}",
        f"{page('trust')}plot/length_bias.svg?{trust}",
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
            assert response["Content-Type"] == "image/svg+xml"
            assert response.content.startswith(b"<?xml")
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
    assert "<img" not in html
    for plot in ("matcher_map", "histograms", "length_bias"):
        # Drawn inline, the download being the same drawing as a file.
        assert f'class="chart" id="{plot}"' in html
        assert f"plot/{plot}.svg?" in html
    assert ".png" not in html


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


def test_means_give_the_number_of_topics_like_trec_evals_num_q(staff_client, world):
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    query = f"qrels=qrels:{world.qrels.pk}&{RULE}&measures=AP"
    html = staff_client.get(f"{url}?{query}").content.decode()
    assert "how many topics each mean is over (trec_eval's num_q)" in html
    # The header says it in words; the CSV's name is its tooltip.
    assert (
        'data-column="num_q" title="num_q in the CSV" class="num">topics</th>' in html
    )
    rows = list(
        csv.reader(
            io.StringIO(
                staff_client.get(f"{url}csv/evaluation?{query}").content.decode()
            )
        )
    )
    assert rows[0] == ["run", "AP", "num_q"]
    judged = {q for q, docs in world.file_qrels.items() if docs}
    for name, _, num_q in rows[1:]:
        assert int(num_q) == len(judged & set(world.file_runs[name])), name


def test_compare_defaults_to_two_different_qrels(staff_client, world):
    url = reverse("evaluation-page", args=[world.collection.pk, "compare"])
    page = staff_client.get(url)
    form = page.context["form"]
    assert form.data["qrels_a"] != form.data["qrels_b"]
    assert (form.data["qrels_a"], form.data["qrels_b"]) == (
        "human",
        f"qrels:{world.qrels.pk}",
    )
    assert 'id="table-comparison_summary"' in page.text


def _statap_rows(client, world, sample) -> tuple[str, list[dict]]:
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    query = f"qrels=human&{RULE}&measures=AP&sample={sample.pk}"
    page = client.get(f"{url}?{query}").content.decode()
    text = client.get(f"{url}csv/statap?{query}").content.decode()
    return page, list(csv.DictReader(io.StringIO(text)))


MEANS = ("statMAP", "statMRP", "statMPC@30", "statMNDCG")


def test_a_statap_mean_above_one_is_explained(staff_client, world):
    page, rows = _statap_rows(staff_client, world, world.sample)
    assert all(float(r[m]) <= 1 for r in rows for m in MEANS)  # 8 documents per topic
    assert 'id="statmap-note"' not in page
    # With 2 sampled documents per topic the ratio estimator can pass 1.
    for seed in range(1, 16):
        small = sample_draw(
            pool=world.pool, size=2, method="statap", seed=seed, name=f"tiny{seed}"
        )
        judge_sample(small, world.file_qrels, UserFactory(username=f"tiny{seed}"))
        page, rows = _statap_rows(staff_client, world, small)
        above = [m for m in MEANS if any(float(r[m]) > 1 for r in rows)]
        if above:
            break
    else:
        pytest.fail("no 2-document sample gave a statAP mean above 1")
    assert 'id="statmap-note"' in page
    assert "are ratio estimators" in page
    assert f"{' and '.join(above)} above 1" in page


def test_csv_downloads_do_not_pass_formulas_through(staff_client, world):
    """Run tags are free text from imported files: a spreadsheet must not run them."""
    tags = ['=HYPERLINK("http://evil.example","x")', "+SUM(1+1)", "@SUM(1)"]
    runs = list(Run.objects.filter(collection=world.collection).order_by("pk"))
    for run, tag in zip(runs, tags, strict=False):
        run.name = tag
        run.save(update_fields=["name"])
    cells = []
    for url in [u for u in _urls(world) if "/csv/" in u]:
        response = staff_client.get(url)
        assert response.status_code == 200, url
        cells += [c for row in csv.reader(io.StringIO(response.text)) for c in row]
    for tag in tags:
        assert "'" + tag in cells
    formulas = [c for c in cells if c.startswith(("=", "+", "@"))]
    assert formulas == []


def test_a_chart_opened_on_its_own_needs_and_is_allowed_nothing(staff_client, world):
    svgs = [u for u in _urls(world) if "/plot/" in u]
    for url in svgs:
        response = staff_client.get(url)
        for needless in (b"<style", b'style="', b"<script", b"href="):
            assert needless not in response.content, (url, needless)
        policy = dict(
            part.strip().split(" ", 1)
            for part in response["Content-Security-Policy"].split(";")
        )
        assert policy["default-src"] == "'none'"
        assert "style-src" not in policy
        assert "script-src" not in policy
    page = staff_client.get(reverse("evaluation-index"))
    assert "'unsafe-inline'" not in page["Content-Security-Policy"]


def test_png_downloads_are_gone(staff_client, world):
    png = [u.replace(".svg?", ".png?") for u in _urls(world) if "/plot/" in u]
    for url in png:
        assert staff_client.get(url).status_code == 404, url


def test_the_compare_scatter_has_a_point_per_run_where_its_scores_are(
    staff_client, world
):
    url = next(u for u in _urls(world) if "/compare/?" in u)
    html = staff_client.get(url).content.decode()
    download = staff_client.get(url.replace("/compare/?", "/compare/plot/scatter.svg?"))
    # The page and the download draw the same chart.
    assert download.content.decode().endswith(svg_element(html, "scatter") + "\n")
    table = staff_client.get(url.replace("/compare/?", "/compare/csv/comparison?"))
    rows = list(csv.DictReader(io.StringIO(table.content.decode())))
    root = chart_root(download.content.decode())
    to_x, to_y = axis(root, "x"), axis(root, "y")
    points = {g.get("data-name"): child(g, "circle") for g in groups(root, "point")}
    assert set(points) == {r["run"] for r in rows}
    assert len(points) == Run.objects.filter(collection=world.collection).count()
    for r in rows:
        dot = points[r["run"]]
        assert to_x(float(dot.get("cx"))) == pytest.approx(
            float(r["score_a"]), abs=2e-3
        )
        assert to_y(float(dot.get("cy"))) == pytest.approx(
            float(r["score_b"]), abs=2e-3
        )


def test_the_researchers_page_has_one_name_in_the_top_bar_home_and_title(
    staff_client,
):
    import re

    home = staff_client.get(reverse("home")).text
    page = staff_client.get(reverse("evaluation-index")).text
    url = reverse("evaluation-index")
    names = {
        "home": re.search(rf'<a href="{url}">([^<]+)</a>', home).group(1),
        "top bar": re.search(
            rf'<a href="{url}" id="nav-[^"]+"[^>]*>([^<]+)</a>', page
        ).group(1),
        "title": re.search(r"<title>([^<·]+?)\s*(·|</title>)", page).group(1),
        "heading": re.search(r"<h1>([^<]+)</h1>", page).group(1),
    }
    assert set(names.values()) == {"Evaluation"}, names
