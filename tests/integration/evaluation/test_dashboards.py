"""Dashboard results are computed once per input and kept: later requests and downloads
are served from the kept result, and a change of qrels, runs, judgments or job
computes afresh."""

import csv
import io
import time

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor_ui.templatetags.numbers import number
from nuggets_app.collection.services.imports import qrels_import, runs_import
from nuggets_app.evaluation.services import dashboards
from nuggets_app.evaluation.services.verification import verification_queue_create
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.matching import match_job_rescore
from nuggets_app.models import Judgment
from tests.svg_charts import SVG, axis, chart_root, child, groups, svg_element

pytestmark = pytest.mark.django_db
RULE = {"kind": "threshold", "threshold": "0.5", "n": "100"}


@pytest.fixture
def calls(monkeypatch):
    """How many times each page computation really ran."""
    counts: dict[str, int] = {}
    names = ("runs_evaluation", "qrels_comparison", "trust_diagnostics",
             "verification_agreement")  # fmt: skip
    for name in names:
        computation = getattr(dashboards, name)
        original = computation.fn

        def counted(*, _name=name, _original=original, **params):
            counts[_name] = counts.get(_name, 0) + 1
            return _original(**params)

        monkeypatch.setattr(computation, "fn", counted)
        counts[name] = 0
    return counts


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def _page(world, name):
    return reverse("evaluation-page", args=[world.collection.pk, name])


def _runs_query(world, qrels=None):
    return {**RULE, "qrels": qrels or f"qrels:{world.qrels.pk}",
            "measures": "AP P@10", "sample": str(world.sample.pk)}  # fmt: skip


def _trust_query(world):
    return {**RULE, "job": str(world.job.pk), "human": "human", "bins": "10",
            "length_bins": "10"}  # fmt: skip


def _csv_rows(response):
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))


def test_a_second_request_is_served_from_the_kept_result(staff_client, world, calls):
    url, query = _page(world, "runs"), _runs_query(world)
    with CaptureQueriesContext(connection) as first:
        assert staff_client.get(url, query).status_code == 200
    with CaptureQueriesContext(connection) as second:
        response = staff_client.get(url, query)
    assert calls["runs_evaluation"] == 1
    # The kept result answers after a few version checks, not the run/qrels reads.
    assert len(second) < 20 < len(first)
    assert [row[0] for row in response.context["tables"]["evaluation"]["rows"]] == (
        sorted(world.file_runs)
    )


def test_downloads_use_the_kept_result_and_equal_the_page(staff_client, world, calls):
    base, query = _page(world, "runs"), _runs_query(world)
    page = staff_client.get(base, query)
    shown = page.context["tables"]["evaluation"]
    means = staff_client.get(f"{base}csv/evaluation", query)
    topics = staff_client.get(f"{base}csv/evaluation_topics", query)
    again = staff_client.get(f"{base}csv/evaluation_topics", query)
    assert calls["runs_evaluation"] == 1
    header, *rows = _csv_rows(means)
    assert tuple(header) == shown["columns"]
    page_rows = list(shown["rows"])
    assert [r[0] for r in rows] == [r[0] for r in page_rows]
    for row, page_row in zip(rows, page_rows, strict=True):
        # Measures are floats shown to 4 decimals; num_q is a count.
        assert [f"{float(v):.4f}" for v in row[1:-1]] == [
            number(v) for v in page_row[1:-1]
        ]
        assert row[-1] == number(page_row[-1])
    assert again.content == topics.content
    per_topic = _csv_rows(topics)[1:]
    assert len(per_topic) == len(page.context["tables"]["evaluation_topics"]["rows"])


def test_plots_are_drawn_from_the_kept_result(staff_client, world, calls):
    base, query = _page(world, "trust"), _trust_query(world)
    page = staff_client.get(base, query)
    assert page.context["report"].matcher.labels
    svg = staff_client.get(f"{base}plot/histograms.svg", query)
    assert svg.content.startswith(b"<?xml")
    assert svg.content.decode().endswith(
        svg_element(page.content.decode(), "histograms") + "\n"
    )
    # One bar per bin and label, as high as the pooled counts the report holds.
    report = page.context["report"].histograms
    root = chart_root(svg.content.decode())
    to_count = axis(root, "y")
    bars = [b for b in root.iter(f"{SVG}rect") if b.get("class") == "bar"]
    counts = [*report.pooled_relevant, *report.pooled_nonrelevant]
    assert len(bars) == len(counts) == 2 * report.bins
    # The top of each bar, read on the count axis.
    drawn = sorted(round(to_count(float(b.get("y", "nan")))) for b in bars)
    assert drawn == sorted(counts)
    assert staff_client.get(f"{base}csv/do_hsa", query).status_code == 200
    assert calls["trust_diagnostics"] == 1


def test_reimported_qrels_are_evaluated_afresh(staff_client, world, calls, tmp_path):
    url, query = _page(world, "runs"), _runs_query(world)
    before = staff_client.get(f"{url}csv/evaluation", query).content
    # The same qrels with every relevant document of topic 1 dropped.
    lines = [
        f"{qid} 0 {docno} {rel}"
        for qid, docs in world.file_qrels.items()
        for docno, rel in docs.items()
        if qid != "1"
    ]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n")
    qrels_import(path=path, collection=world.collection, name=world.qrels.name)
    after = staff_client.get(f"{url}csv/evaluation", query).content
    assert calls["runs_evaluation"] == 2
    assert after != before


def test_a_new_or_reimported_run_is_evaluated_afresh(
    staff_client, world, calls, tmp_path
):
    url, query = _page(world, "runs"), _runs_query(world)
    staff_client.get(url, query)
    path = tmp_path / "extra.run"
    ranked = world.file_runs["kidus-hw1-bm25"]
    path.write_text(
        "".join(
            f"{qid} Q0 {docno} {rank} {-rank} extra\n"
            for qid, docs in ranked.items()
            for rank, docno in enumerate(sorted(docs), 1)
        )
    )
    runs_import(paths=[path], collection=world.collection)
    response = staff_client.get(url, query)
    assert calls["runs_evaluation"] == 2
    assert "extra" in [
        row[0] for row in response.context["tables"]["evaluation"]["rows"]
    ]
    staff_client.get(url, query)
    assert calls["runs_evaluation"] == 2
    path.write_text(path.read_text().replace(" Q0 ", " Q0 ", 1)[: -len("\n")] + "\n")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[: len(lines) // 2]) + "\n")  # a shorter run
    runs_import(paths=[path], collection=world.collection)
    staff_client.get(url, query)
    assert calls["runs_evaluation"] == 3


def test_a_new_judgment_recomputes_what_reads_human_qrels(
    staff_client, world, calls, assessor
):
    url = _page(world, "compare")
    query = {**RULE, "qrels_a": f"qrels:{world.qrels.pk}", "qrels_b": "human",
             "measure": "AP"}  # fmt: skip
    staff_client.get(url, query)
    runs_query = _runs_query(world)
    staff_client.get(_page(world, "runs"), runs_query)
    judged = Judgment.objects.filter(topic__collection=world.collection).first()
    judged.relevance = 1 - judged.relevance
    judged.save()
    staff_client.get(url, query)
    assert calls["qrels_comparison"] == 2
    # The runs page reads the imported qrels and the sample's judgments: afresh too.
    staff_client.get(_page(world, "runs"), runs_query)
    assert calls["runs_evaluation"] == 2
    # Without the sample it reads no judgment: kept.
    no_sample = {**runs_query, "sample": ""}
    staff_client.get(_page(world, "runs"), no_sample)
    judged.relevance = 1 - judged.relevance
    judged.save()
    staff_client.get(_page(world, "runs"), no_sample)
    assert calls["runs_evaluation"] == 3


def test_a_rescored_job_gets_fresh_trust_diagnostics(staff_client, world, calls):
    url, query = _page(world, "trust"), _trust_query(world)
    staff_client.get(url, query)
    staff_client.get(url, query)
    assert calls["trust_diagnostics"] == 1
    match_job_rescore(job=world.job, lam=0.9)
    staff_client.get(url, query)
    assert calls["trust_diagnostics"] == 2


def test_while_computing_the_page_shows_progress_and_downloads_wait(
    staff_client, world, calls
):
    url, query = _page(world, "runs"), _runs_query(world)
    params = {
        "collection_id": world.collection.pk, "qrels": f"qrels:{world.qrels.pk}",
        "rule": {"kind": "threshold", "threshold": 0.5, "n": 0},
        "measures": ["AP", "P@10"], "sample": world.sample.pk, "expected": None,
    }  # fmt: skip
    key = dashboards.runs_evaluation.key(**params)
    # A worker is busy with it: 3 of 12 steps done.
    cache.set(key, {"status": "running", "done": 3, "total": 12, "at": time.time()})
    page = staff_client.get(url, query)
    assert page.status_code == 200
    assert b'id="computing"' in page.content
    assert page.context["tables"] == {}
    progress = staff_client.get(f"{url}progress", query).json()
    assert progress == {"status": "running", "done": 3, "total": 12}
    download = staff_client.get(f"{url}csv/evaluation", query)
    assert download.status_code == 503
    assert download["Retry-After"]
    assert calls["runs_evaluation"] == 0
    cache.delete(key)
    assert staff_client.get(f"{url}progress", query).json() == {"status": "done"}
    assert b'id="computing"' not in staff_client.get(url, query).content
    assert calls["runs_evaluation"] == 1


def _verification(world, assessor):
    return verification_queue_create(
        job=world.job, rule=DecisionRule(kind="top_n", n=6), relevant=3,
        nonrelevant=2, seed=1, assessors=[assessor],
    )  # fmt: skip


def test_the_verification_report_and_its_downloads_are_kept(
    staff_client, world, calls, other_assessor
):
    sample = _verification(world, other_assessor)
    url, query = _page(world, "verification"), {"sample": str(sample.pk)}
    with CaptureQueriesContext(connection) as first:
        page = staff_client.get(url, query)
    # Counted now: a later request may empty the connection's log of queries.
    computing = len(first)
    assert page.context["report"].overall.drawn == sum(
        len(info["drawn"])
        for record in sample.draws.values()
        for info in record["strata"].values()
    )
    with CaptureQueriesContext(connection) as second:
        staff_client.get(url, query)
    kept = len(second)
    svg = staff_client.get(f"{url}plot/agreement.svg", query)
    assert svg.content.startswith(b"<?xml")
    assert staff_client.get(f"{url}plot/agreement.svg", query).content == svg.content
    # Nothing judged yet: a line per inferred label and overall, each n/a.
    runs = groups(chart_root(svg.content.decode()), "run")
    assert [g.get("data-run") for g in runs][-1] == "overall"
    assert all(child(g, "title").text.endswith(": n/a") for g in runs)
    table = staff_client.get(f"{url}csv/verification", query)
    assert staff_client.get(f"{url}csv/verification", query).content == table.content
    assert calls["verification_agreement"] == 1
    # The kept report answers after its version checks, not the report's reads.
    assert kept < computing


def test_a_new_judgment_recomputes_the_verification_report_a_rescore_does_not(
    staff_client, world, calls, other_assessor
):
    sample = _verification(world, other_assessor)
    url, query = _page(world, "verification"), {"sample": str(sample.pk)}
    assert staff_client.get(url, query).context["report"].overall.judged == 0
    # The inferred labels were stored with the draw: re-scoring the job changes none.
    match_job_rescore(job=world.job, lam=0.9)
    staff_client.get(url, query)
    assert calls["verification_agreement"] == 1
    qid, record = next(iter(sample.draws.items()))
    docno = next(d for info in record["strata"].values() for d in info["drawn"])
    Judgment.objects.create(
        topic=world.topics[qid], document=world.collection.documents.get(docno=docno),
        assessor=other_assessor, relevance=1,
    )  # fmt: skip
    page = staff_client.get(url, query)
    assert calls["verification_agreement"] == 2
    assert page.context["report"].overall.judged == 1
