"""Researcher pages: who may see them, and what they show."""

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.models import MatchJob, MatchResult
from tests.integration.worlds.cranfield_pool import (
    cranfield_world,
    pool_job,
    run_inline,
)
from tests.svg_charts import SVG, axis, chart_root

pytestmark = pytest.mark.django_db
PAYLOAD = "<script>alert(1)</script>"


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, markers={"12": PAYLOAD})


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=10)


def _urls(job, world) -> list[tuple[str, str]]:
    topic = world.topics[0]
    doc = world.pooled[topic.qid][0]
    gets = [
        reverse("job-list"),
        reverse("job-launch"),
        reverse("job-detail", args=[job.pk]),
        reverse("job-progress", args=[job.pk]),
        reverse("job-topic", args=[job.pk, topic.qid]),
        reverse("job-document", args=[job.pk, topic.qid, doc.pk]),
        *(
            reverse("job-export", args=[job.pk, kind])
            for kind in (
                "human",
                "inferred",
                "merged",
                "scores",
                "passages",
            )
        ),
        reverse("job-export-provenance", args=[job.pk, "inferred"]),
    ]
    posts = [
        reverse("job-launch"),
        reverse("job-cancel", args=[job.pk]),
        reverse("job-resume", args=[job.pk]),
        reverse("job-rescore", args=[job.pk]),
    ]
    return [("get", u) for u in gets] + [("post", u) for u in posts]


def test_assessors_cannot_launch_see_or_export_jobs(client, world, job, other_assessor):
    client.force_login(other_assessor)
    before = (MatchJob.objects.count(), job.status, job.lam)
    for method, url in _urls(job, world):
        data = {"lam": "0.9", "collection": world.collection.pk, "source": "pool"}
        response = getattr(client, method)(url, data if method == "post" else None)
        assert response.status_code == 403, (method, url)
    job.refresh_from_db()
    assert (MatchJob.objects.count(), job.status, job.lam) == before


def test_anonymous_users_are_sent_to_log_in(client, world, job):
    for method, url in _urls(job, world):
        response = getattr(client, method)(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login"))


def test_a_researcher_launches_a_job_from_the_form(client, world, other_assessor):
    other_assessor.groups.add(Group.objects.create(name="researchers"))
    client.force_login(other_assessor)
    response = client.post(
        reverse("job-launch"),
        {
            "collection": world.collection.pk, "source": "pool", "pool": world.pool.pk,
            "topics": "1", "k": 3, "lam": 0.5, "stem": "porter", "stopwords": "default",
            "grades": "1", "aspects": "", "name": "from the form",
        },
    )  # fmt: skip
    job = MatchJob.objects.get(name="from the form")
    assert response.status_code == 302
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    assert [t.qid for t in job.topics.all()] == ["1"]
    assert job.nugget_filter == {"grades": [1]}
    assert job.docs_total == 24
    assert job.created_by == other_assessor


def test_the_launch_form_shows_a_services_refusal(staff_client, world):
    response = staff_client.post(
        reverse("job-launch"),
        {
            "collection": world.collection.pk, "source": "pool", "topics": "",
            "k": 3, "lam": 0.5, "stem": "porter", "stopwords": "default",
        },
    )  # fmt: skip
    assert response.status_code == 200
    assert "source &#x27;pool&#x27; needs a pool of cranfield-jobs" in response.text
    assert not MatchJob.objects.exists()


def test_job_pages_show_progress_charts_and_highlights(staff_client, world, job):
    detail = staff_client.get(reverse("job-detail", args=[job.pk]))
    assert detail.status_code == 200
    assert "jobs_progress.js" in detail.text
    progress = staff_client.get(reverse("job-progress", args=[job.pk])).json()
    assert progress["status"] == "done"
    assert (progress["docs_done"], progress["chunks_done"]) == (48, 6)

    topic = world.topics[0]
    page = staff_client.get(
        reverse("job-topic", args=[job.pk, topic.qid]), {"threshold": 0.3}
    )
    assert page.status_code == 200
    histogram = chart_root(page.text, "histogram")
    bars = [b for b in histogram.iter(f"{SVG}rect") if b.get("class") == "bar"]
    assert len(bars) == 30  # 10 bins x 3 series
    assert {b.get("data-series") for b in bars} == {
        "Judged relevant", "Judged non-relevant", "Unjudged",
    }  # fmt: skip
    # Each bar as high as its count in the table beside the chart.
    rows = page.context["histogram"]["rows"]
    to_count = axis(histogram, "y")
    drawn = sorted(round(to_count(float(b.get("y", "nan")))) for b in bars)
    assert drawn == sorted(c for row in rows for c in row["counts"])
    curve = chart_root(page.text, "curve")
    assert len(list(curve.iter(f"{SVG}polyline"))) == 1
    assert "estimated precision" in page.text

    result = MatchResult.objects.get(job=job, topic=topic, document__docno="12")
    doc_page = staff_client.get(
        reverse("job-document", args=[job.pk, topic.qid, result.document_id])
    )
    assert doc_page.status_code == 200
    assert PAYLOAD not in doc_page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc_page.text
    start, end = min(result.spans)  # overlapping spans merge into one mark
    assert f"<mark>{result.document.text[start:end]}" in doc_page.text
    assert doc_page.text.count("<mark>") >= 1


def test_downloads_are_attachments_in_trec_format(staff_client, world, job):
    url = reverse("job-export", args=[job.pk, "merged"])
    response = staff_client.get(url, {"kind": "threshold", "threshold": "0.3"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="job-{job.pk}-merged.qrels"'
    )
    lines = response.content.decode().splitlines()
    assert len(lines) == 48
    assert all(len(line.split()) == 4 for line in lines)
    side = staff_client.get(
        reverse("job-export-provenance", args=[job.pk, "merged"]),
        {"kind": "threshold", "threshold": "0.5"},
    )
    assert side["Content-Disposition"] == (
        f'attachment; filename="job-{job.pk}-merged.qrels.provenance.json"'
    )
    assert side.json()["rule"] == {
        "kind": "threshold",
        "threshold": 0.5,
        "per_topic": {},
    }
    prels = staff_client.get(reverse("job-export", args=[job.pk, "prels"]))
    assert prels.status_code == 409  # a pool job has no sample


def _launch_data(world, **changes) -> dict:
    data = {
        "collection": world.collection.pk, "source": "pool", "pool": world.pool.pk,
        "topics": "1", "k": 3, "lam": 0.5, "stem": "porter", "stopwords": "default",
        "grades": "", "aspects": "", "name": "",
    }  # fmt: skip
    data.update(changes)
    return data


def test_the_launch_form_refuses_unknown_topics_as_the_command_does(
    staff_client, world
):
    response = staff_client.post(
        reverse("job-launch"), _launch_data(world, topics="1 99")
    )
    assert response.status_code == 200
    assert "unknown topics: 99" in response.text
    assert not MatchJob.objects.exists()
    with pytest.raises(CommandError, match=r"^unknown topics: 99$"):
        call_command(
            "match", "--collection", world.collection.name, "--pool", "depth",
            "--topics", "1", "99",
        )  # fmt: skip
    assert not MatchJob.objects.exists()


def test_aspects_are_one_per_line_or_comma_separated(staff_client, world):
    topic = world.topics[0]
    for nugget, aspect in zip(
        topic.nuggets.order_by("pk"), ["output", "cost", "ux"], strict=True
    ):
        nugget.aspect = aspect
        nugget.save()
    for name, text in (("lines", "output\r\ncost\r\n"), ("commas", "output, cost")):
        answer = staff_client.post(
            reverse("job-launch"), _launch_data(world, aspects=text, name=name)
        )
        assert answer.status_code == 302
        job = MatchJob.objects.get(name=name)
        assert job.nugget_filter == {"aspects": ["cost", "output"]}
    detail = staff_client.get(reverse("job-detail", args=[job.pk]))
    assert "only nuggets with aspects cost, output" in detail.text
    assert "{&#x27;aspects&#x27;" not in detail.text


def test_an_aspect_no_topic_has_is_refused_not_a_job_that_matches_nothing(
    staff_client, world
):
    nugget = world.topics[0].nuggets.first()
    nugget.aspect = "output"
    nugget.save()
    response = staff_client.post(
        reverse("job-launch"), _launch_data(world, aspects="outptu")
    )
    assert response.status_code == 200
    assert "unknown aspects: &#x27;outptu&#x27; (the topics&#x27; aspects: output)" in (
        response.text
    )
    assert not MatchJob.objects.exists()


def test_the_launch_form_preselects_the_only_collection_and_pool(staff_client, world):
    page = staff_client.get(reverse("job-launch"))
    assert f'<option value="{world.collection.pk}" selected>' in page.text
    assert f'<option value="{world.pool.pk}" selected>' in page.text
    assert "shingle size" in page.text  # k and lambda are explained
    assert "lambda^((S-k)/k)" in page.text
    assert "launch_form.js" in page.text


def test_prels_are_offered_only_for_a_job_over_a_sample(staff_client, world, job):
    detail = staff_client.get(reverse("job-detail", args=[job.pk]))
    assert reverse("job-export", args=[job.pk, "merged"]) in detail.text
    assert reverse("job-export", args=[job.pk, "prels"]) not in detail.text
    refused = staff_client.get(reverse("job-export", args=[job.pk, "prels"]))
    assert refused.status_code == 409
    assert refused["Content-Type"].startswith("text/html")
    assert "<title>Nothing to download · " in refused.text
    assert f"job {job.pk} ran over pool, not a sample" in refused.text
    assert f'href="{reverse("job-detail", args=[job.pk])}"' in refused.text
    missing = staff_client.get(reverse("job-export", args=[job.pk, "nonsense"]))
    assert missing.status_code == 404
    assert "<title>Page not found · " in missing.text


def test_a_finished_job_offers_neither_cancel_nor_rerun(staff_client, world, job):
    detail = staff_client.get(reverse("job-detail", args=[job.pk]))
    assert 'data-action="cancel" hidden' in detail.text
    assert 'data-action="resume" hidden' in detail.text
    progress = staff_client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["can_cancel"], progress["can_resume"]) == (False, False)
    answer = staff_client.post(reverse("job-resume", args=[job.pk]), follow=True)
    assert f"Job {job.pk} is done: nothing to re-run." in answer.text
    assert "Re-queued 0 chunks" not in answer.text
    answer = staff_client.post(reverse("job-cancel", args=[job.pk]), follow=True)
    assert f"Job {job.pk} is done already: nothing to cancel." in answer.text


def test_a_cancelled_job_offers_rerun_and_a_live_one_cancel(staff_client, world):
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    progress = staff_client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["can_cancel"], progress["can_resume"]) == (True, False)
    assert progress["can_rescore"] is False
    staff_client.post(reverse("job-cancel", args=[job.pk]))
    progress = staff_client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["status"], progress["can_cancel"]) == ("cancelled", False)
    assert progress["can_resume"] is True
    detail = staff_client.get(reverse("job-detail", args=[job.pk]))
    assert 'data-action="cancel" hidden' in detail.text
    assert 'data-action="resume">' in detail.text


def test_each_scoring_is_numbered_and_pages_say_which_they_used(
    staff_client, world, job
):
    provenance = reverse("job-export-provenance", args=[job.pk, "merged"])
    assert staff_client.get(provenance).json()["job"]["scoring"] == 1
    answer = staff_client.post(
        reverse("job-rescore", args=[job.pk]), {"lam": "0.3"}, follow=True
    )
    assert f"now use job {job.pk} scoring 2 (lambda 0.3, re-scored " in answer.text
    assert "anything computed before used scoring 1: lambda 0.5" in answer.text
    job.refresh_from_db()
    assert [r["previous_lam"] for r in job.rescorings] == [0.5]
    assert "<li>scoring 1: lambda 0.5, " in answer.text
    assert "<li>scoring 2: lambda 0.3, " in answer.text
    side = staff_client.get(provenance).json()["job"]
    assert (side["scoring"], side["lam"]) == (2, 0.3)
    compare = reverse("evaluation-page", args=[world.collection.pk, "compare"])
    page = staff_client.get(
        compare,
        {"qrels_a": "human", "qrels_b": f"merged:{job.pk}", "measure": "AP",
         "kind": "threshold", "threshold": 0.5, "n": 100},
    )  # fmt: skip
    assert f"Match scores used: job {job.pk} scoring 2 (lambda 0.3, " in page.text


def test_a_launch_with_the_broker_down_says_so_and_saves_nothing(
    client, world, staff, broker_down
):
    client.force_login(staff)
    response = client.post(
        reverse("job-launch"),
        {
            "collection": world.collection.pk, "source": "pool", "pool": world.pool.pk,
            "topics": "1", "k": 3, "lam": 0.5, "stem": "porter", "stopwords": "default",
            "grades": "1", "aspects": "", "name": "broker down",
        },
    )  # fmt: skip
    assert response.status_code == 200
    assert "task broker at redis://127.0.0.1:9/" in response.text
    assert "is unreachable" in response.text
    assert not MatchJob.objects.exists()


def test_a_job_whose_chunks_have_not_moved_shows_as_stalled(
    client, world, staff, settings
):
    from datetime import timedelta

    from django.utils import timezone

    from nuggets_app.models import MatchChunk

    client.force_login(staff)
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    progress = client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["state"], progress["stalled"]) == ("pending", False)
    quiet = timedelta(seconds=settings.MATCH_CHUNK_STALE_SECONDS + 5)
    MatchChunk.objects.filter(job=job).update(heartbeat_at=timezone.now() - quiet)
    progress = client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["status"], progress["state"]) == ("pending", "stalled")
    page = client.get(reverse("job-detail", args=[job.pk])).text
    assert '<dd data-field="status">stalled</dd>' in page
    assert "No chunk has moved for" in page
    run_inline(job)
    progress = client.get(reverse("job-progress", args=[job.pk])).json()
    assert (progress["state"], progress["stalled"]) == ("done", False)


def test_a_job_topic_is_addressed_by_its_qid(staff_client, world, job):
    topic = world.topics[1]
    url = f"/jobs/{job.pk}/qid/{topic.qid}/"
    assert reverse("job-topic", args=[job.pk, topic.qid]) == url
    page = staff_client.get(url)
    assert page.status_code == 200
    assert f"<h1>Job {job.pk}, topic {topic.qid}</h1>" in page.text
    assert staff_client.get(f"/jobs/{job.pk}/qid/no-such-qid/").status_code == 404

    result = MatchResult.objects.filter(job=job, topic=topic).first()
    document = f"{url}documents/{result.document_id}/"
    assert reverse("job-document", args=[job.pk, topic.qid, result.document_id]) == (
        document
    )
    assert staff_client.get(document).status_code == 200
    # No address by topic id: the product was never released with one.
    assert staff_client.get(f"/jobs/{job.pk}/topics/{topic.pk}/").status_code == 404
