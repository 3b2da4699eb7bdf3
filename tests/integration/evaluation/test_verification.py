"""Verification queue: seeded stratified draw, assignment, agreement report."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from nuggets_app.evaluation.services.verification import (
    StratumResult,
    VerificationError,
    agreement_estimate,
    verification_queue_create,
    verification_report,
    wilson_interval,
)
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.models import (
    Assignment,
    Judgment,
    MatchJob,
    MatchResult,
    PoolDocument,
    SampleDocument,
)
from tests.svg_charts import axis, chart_root, child, groups

pytestmark = pytest.mark.django_db
RULE = DecisionRule(kind="top_n", n=6)


def _queue(world, assessors=(), *, seed=1, name="", relevant=3, nonrelevant=2):
    return verification_queue_create(
        job=world.job, rule=RULE, relevant=relevant, nonrelevant=nonrelevant,
        seed=seed, assessors=list(assessors), name=name,
    )  # fmt: skip


def _queue_rows(sample) -> list[tuple[str, str, int]]:
    return list(
        SampleDocument.objects.filter(sample=sample)
        .order_by("topic__qid", "order")
        .values_list("topic__qid", "document__docno", "order")
    )


def test_the_queue_is_reproducible_for_a_seed(world):
    first = _queue(world, name="v1")
    again = _queue(world, name="v2")
    other = _queue(world, name="v3", seed=2)
    assert _queue_rows(first) == _queue_rows(again)
    assert {q: r["strata"] for q, r in first.draws.items()} == {
        q: r["strata"] for q, r in again.draws.items()
    }
    assert _queue_rows(first) != _queue_rows(other)
    assert _queue(world, name="v1").pk == first.pk  # same parameters: the same sample


def _unjudged_and_inferred(world) -> dict[str, tuple[set[str], set[str]]]:
    """Per qid: unjudged pool docnos, and those among the top 6 scored results."""
    judged = set(
        Judgment.objects.filter(relevance__isnull=False).values_list(
            "topic_id", "document_id"
        )
    )
    out = {}
    for qid, topic in world.topics.items():
        pooled = PoolDocument.objects.filter(pool=world.pool, topic=topic)
        unjudged = {
            p.document.docno
            for p in pooled.select_related("document")
            if (topic.pk, p.document_id) not in judged
        }
        results = MatchResult.objects.filter(job=world.job, topic=topic, score__gt=0)
        top = results.order_by("-score", "document_id")[:6]
        out[qid] = (unjudged, {r.document.docno for r in top} & unjudged)
    return out


def test_strata_sizes_add_up(world):
    sample = _queue(world, relevant=3, nonrelevant=2)
    expected = _unjudged_and_inferred(world)
    rows = _queue_rows(sample)
    probs = {
        (q, d): p
        for q, d, p in SampleDocument.objects.filter(sample=sample).values_list(
            "topic__qid", "document__docno", "inclusion_prob"
        )
    }
    for qid, (unjudged, inferred) in expected.items():
        strata = sample.draws[qid]["strata"]
        rel, non = strata["relevant"], strata["nonrelevant"]
        assert rel["population"] == len(inferred)
        assert rel["population"] + non["population"] == len(unjudged)
        assert len(rel["drawn"]) == min(3, len(inferred))
        assert len(non["drawn"]) == min(2, len(unjudged - inferred))
        assert set(rel["drawn"]) <= inferred
        assert set(non["drawn"]) <= unjudged - inferred
        queued = [(d, o) for q, d, o in rows if q == qid]
        assert sorted(d for d, _ in queued) == sorted(rel["drawn"] + non["drawn"])
        assert [o for _, o in queued] == list(range(1, len(queued) + 1))
        for info in (rel, non):
            for docno in info["drawn"]:
                assert probs[(qid, docno)] == pytest.approx(
                    len(info["drawn"]) / info["population"]
                )
    assert any(sample.draws[q]["strata"]["relevant"]["drawn"] for q in expected)


def test_assessors_judge_the_queue_on_the_ordinary_pages(world, client, other_assessor):
    sample = _queue(world, [other_assessor])
    assignments = Assignment.objects.filter(sample=sample, assessor=other_assessor)
    assert assignments.count() == len(sample.draws)
    client.force_login(other_assessor)
    first = assignments.first()
    page = client.get(reverse("judge", args=[first.pk, 1]))
    assert page.status_code == 200
    docno = SampleDocument.objects.get(
        sample=sample, topic=first.topic, order=1
    ).document.docno
    assert docno.encode() in page.content


def _judge_with_the_real_qrels(world, sample, assessor, *, skip_last: bool) -> None:
    for qid, record in sample.draws.items():
        for info in record["strata"].values():
            drawn = info["drawn"][:-1] if skip_last else info["drawn"]
            for docno in drawn:
                doc = world.collection.documents.get(docno=docno)
                Judgment.objects.create(
                    topic=world.topics[qid], document=doc, assessor=assessor,
                    relevance=int(world.file_qrels[qid].get(docno, 0) >= 1),
                )  # fmt: skip


def test_the_report_weights_strata_and_its_interval_covers_the_estimate(
    world, other_assessor
):
    sample = _queue(world, [other_assessor], relevant=4, nonrelevant=4)
    _judge_with_the_real_qrels(world, sample, other_assessor, skip_last=True)
    report = verification_report(sample=sample)
    numerator = denominator = 0.0
    for s in report.strata:
        info = sample.draws[s.qid]["strata"][s.label]
        judged = info["drawn"][:-1]
        assert s.judged == len(judged)
        agree = sum(
            (world.file_qrels[s.qid].get(d, 0) >= 1) == (s.label == "relevant")
            for d in judged
        )
        assert s.agree == agree
        if judged:
            numerator += s.population * agree / len(judged)
            denominator += s.population
    overall = report.overall
    assert overall.estimate == pytest.approx(numerator / denominator, abs=1e-12)
    for row in report.rows:
        if row.judged:
            assert row.ci_low <= row.estimate <= row.ci_high, row
            assert row.ci_low >= 0
            assert row.ci_high <= 1
    assert overall.judged == sum(s.judged for s in report.strata)
    assert overall.population == sum(s.population for s in report.strata)


def test_the_agreement_chart_draws_the_tables_intervals(
    world, staff_client, other_assessor
):
    sample = _queue(world, [other_assessor], relevant=4, nonrelevant=4)
    _judge_with_the_real_qrels(world, sample, other_assessor, skip_last=True)
    url = reverse("evaluation-page", args=[world.collection.pk, "verification"])
    page = staff_client.get(f"{url}?sample={sample.pk}").content.decode()
    root = chart_root(page, "agreement")
    to_x = axis(root, "x")
    table = csv.DictReader(
        io.StringIO(staff_client.get(f"{url}csv/verification?sample={sample.pk}").text)
    )
    summary = {
        "overall" if r["inferred"] == "all" else f"inferred {r['inferred']}": r
        for r in table
        if r["topic"] == "all"
    }
    runs = {g.get("data-run"): g for g in groups(root, "run")}
    assert list(runs) == list(summary)
    for name, row in summary.items():
        bar = child(runs[name], "line", "interval")
        dot = child(runs[name], "circle", "estimate")
        for px, column in ((bar.get("x1"), "ci_low"), (bar.get("x2"), "ci_high"),
                           (dot.get("cx"), "agreement")):  # fmt: skip
            assert to_x(float(px or "nan")) == pytest.approx(
                float(row[column]), abs=2e-3
            )


def test_wilson_interval_equals_newcombes_table():
    # Newcombe (1998), Statistics in Medicine 17:857, method 3 (score, no correction).
    for successes, n, low, high in (
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ):
        got = wilson_interval(successes / n, n)
        assert got == pytest.approx((low, high), abs=5e-5)


def test_a_stratum_judged_in_full_is_known_exactly():
    full = StratumResult("1", "relevant", 4, 4, 4, 3)
    exact = agreement_estimate("1", "relevant", [full])
    assert (exact.estimate, exact.ci_low, exact.ci_high) == (0.75, 0.75, 0.75)
    part = StratumResult("1", "relevant", 40, 4, 4, 3)
    estimate = agreement_estimate("1", "relevant", [part])
    # Sampling 4 of 40 without replacement: n_eff = 4 / (1 - 0.1).
    want = wilson_interval(0.75, 4 / 0.9)
    assert (estimate.ci_low, estimate.ci_high) == pytest.approx(want)


def test_it_refuses_a_taken_name_and_a_job_without_a_pool(world):
    _queue(world, name="v1")
    with pytest.raises(VerificationError, match="exists with other parameters"):
        _queue(world, name="v1", seed=9)
    whole = MatchJob.objects.create(
        collection=world.collection, source="collection", status="done"
    )
    with pytest.raises(VerificationError, match="matched the whole collection"):
        verification_queue_create(
            job=whole, rule=RULE, relevant=1, nonrelevant=1, seed=1, assessors=[]
        )


def test_the_command_draws_assigns_and_reports(world, other_assessor):
    out = io.StringIO()
    call_command(
        "verification_queue", "--job", str(world.job.pk), "--top-n", "6",
        "--relevant", "3", "--nonrelevant", "2", "--seed", "4", "--name", "cmd",
        "--assessor", other_assessor.username, stdout=out,
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[-1].endswith("\tcmd")
    assert Assignment.objects.filter(sample__name="cmd").count() == len(world.topics)
    report = io.StringIO()
    call_command(
        "verification_queue", "--job", str(world.job.pk), "--report", "--name", "cmd",
        stdout=report,
    )  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(report.getvalue())))
    assert (rows[-1]["topic"], rows[-1]["inferred"]) == ("all", "all")
    assert len(rows) == 2 * len(world.topics) + 3
    assert sum(int(r["drawn"]) for r in rows[:-3]) == int(rows[-1]["drawn"])
    with pytest.raises(CommandError, match="no user nobody"):
        call_command("verification_queue", "--job", str(world.job.pk),
                     "--assessor", "nobody")  # fmt: skip


def test_the_dashboard_draws_and_reports(staff_client, world, other_assessor):
    url = reverse("verification-create", args=[world.collection.pk])
    response = staff_client.post(url, {
        "job": world.job.pk, "kind": "top_n", "threshold": 0.5, "n": 6,
        "relevant": 3, "nonrelevant": 2, "seed": 5, "name": "web",
        "assessors": [other_assessor.pk], "overlap": 1,
    })  # fmt: skip
    assert response.status_code == 302
    sample = SampleDocument.objects.filter(sample__name="web").first().sample
    assert response["Location"].endswith(f"?sample={sample.pk}")
    page = staff_client.get(response["Location"])
    assert b'id="table-verification"' in page.content
    assert b"plot/agreement.svg" in page.content
    csv_url = reverse("evaluation-page", args=[world.collection.pk, "verification"])
    rows = staff_client.get(f"{csv_url}csv/verification?sample={sample.pk}")
    table = verification_report(sample=sample).table()
    assert rows.content.decode() == table.csv_text()


def test_my_topics_labels_verification_queues(world, client, other_assessor):
    from nuggets_app.pooling.services.assignments import assignment_create

    assignment_create(sample=world.sample, assessors=[other_assessor])
    sample = _queue(world, [other_assessor])
    client.force_login(other_assessor)
    html = client.get(reverse("assessor-home")).content.decode()
    rows = html[html.index("<tbody>") : html.index("</tbody>")].split("<tr>")[1:]
    headers = [row.split("</th>")[0].split(">", 1)[1] for row in rows]
    topic = next(iter(sample.draws))
    same_topic = [h for h in headers if h.startswith(f"{topic}: ")]
    assert len(same_topic) == 2  # the statAP queue and the verification queue
    labelled = [h for h in same_topic if '<span class="tag">verification</span>' in h]
    assert len(labelled) == 1


def test_the_dashboard_wants_an_assessor_or_an_explicit_unassigned(
    staff_client, world, other_assessor
):
    url = reverse("verification-create", args=[world.collection.pk])
    data = {
        "job": world.job.pk, "kind": "top_n", "threshold": 0.5, "n": 6,
        "relevant": 3, "nonrelevant": 2, "seed": 5, "name": "nobody", "overlap": 1,
    }  # fmt: skip
    page = staff_client.get(url)
    assert f'type="checkbox" name="assessors" value="{other_assessor.pk}"' in page.text
    refused = staff_client.post(url, data)
    assert refused.status_code == 200
    assert "choose at least one assessor, or tick" in refused.text
    assert not SampleDocument.objects.filter(sample__name="nobody").exists()
    drawn = staff_client.post(url, {**data, "unassigned": "on"}, follow=True)
    assert "drawn, unassigned: nobody judges it" in drawn.text
    assert SampleDocument.objects.filter(sample__name="nobody").exists()
    assert not Assignment.objects.filter(sample__name="nobody").exists()
    assert (
        "nobody</a> (pool depth10, seed 5, <strong>unassigned</strong>)" in drawn.text
    )
