"""Researcher pages: who may see them, and what they show."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from nuggets_app.models import MatchJob, MatchResult
from nuggets_app.services.matching import match_job_launch
from tests.integration.jobs.world import cranfield_world, run_inline

pytestmark = pytest.mark.django_db
PAYLOAD = "<script>alert(1)</script>"


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, markers={"12": PAYLOAD})


@pytest.fixture
def job(world, settings):
    settings.MATCH_CHUNK_SIZE = 10
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    return run_inline(job)


def _urls(job, world) -> list[tuple[str, str]]:
    topic = world.topics[0]
    doc = world.pooled[topic.qid][0]
    gets = [
        reverse("job-list"),
        reverse("job-launch"),
        reverse("job-detail", args=[job.pk]),
        reverse("job-progress", args=[job.pk]),
        reverse("job-topic", args=[job.pk, topic.pk]),
        reverse("job-document", args=[job.pk, topic.pk, doc.pk]),
        *(
            reverse("job-export", args=[job.pk, kind])
            for kind in (
                "human",
                "inferred",
                "merged",
                "provenance",
                "scores",
                "passages",
            )
        ),
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
        reverse("job-topic", args=[job.pk, topic.pk]), {"threshold": 0.3}
    )
    assert page.status_code == 200
    assert page.text.count("<rect x=") == 30  # 10 bins x 3 series
    assert "<polyline points=" in page.text
    assert "estimated precision" in page.text

    result = MatchResult.objects.get(job=job, topic=topic, document__docno="12")
    doc_page = staff_client.get(
        reverse("job-document", args=[job.pk, topic.pk, result.document_id])
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
    side = staff_client.get(reverse("job-export", args=[job.pk, "provenance"]))
    assert side.json()["rule"] == {
        "kind": "threshold",
        "threshold": 0.5,
        "per_topic": {},
    }
    prels = staff_client.get(reverse("job-export", args=[job.pk, "prels"]))
    assert prels.status_code == 409  # a pool job has no sample
