"""The relevance model on the job pages: the model card, the topic page's p items,
the reliability diagram, the fit button, and Top inferred documents."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from nuggets_app.inference.services.job_model import job_model_fit, job_probabilities
from nuggets_app.models import Judgment, MatchResult, Nugget
from tests.integration.worlds.cranfield_pool import (
    cranfield_world,
    pool_job,
)
from tests.svg_charts import SVG, chart_root

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(
        shared_data, assessor, qids=("3", "4", "8"), per_topic=24, judge=12
    )


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=10)


def _rows(html: str, heading: str) -> list[str]:
    """The docnos of the table rows under a heading."""
    section = html.split(f"<h2>{heading}</h2>", 1)[1].split("</section>", 1)[0]
    return re.findall(r'<th scope="row"><a href="[^"]*">([^<]+)</a></th>', section)


def test_top_inferred_documents_lists_only_the_inferred_ones(staff_client, world, job):
    topic = world.topics[0]
    url = reverse("job-topic", args=[job.pk, topic.qid])
    for threshold in (0.2, 0.5, 0.9):
        page = staff_client.get(url, {"kind": "threshold", "threshold": threshold})
        scores = dict(
            MatchResult.objects.filter(job=job, topic=topic).values_list(
                "document__docno", "score"
            )
        )
        judged = set(
            Judgment.objects.filter(topic=topic, relevance__isnull=False).values_list(
                "document__docno", flat=True
            )
        )
        inferred = {d for d, s in scores.items() if s >= threshold and d not in judged}
        listed = _rows(page.text, "Top inferred documents")
        assert set(listed) <= inferred
        assert len(listed) == min(25, len(inferred))
        assert (
            f"{len(inferred)} unjudged documents inferred relevant under" in page.text
        )
        # The judged documents are listed apart, with the person's decision.
        assert set(_rows(page.text, "Judged documents")) == judged & set(scores)


def test_the_topic_page_shows_p_items_once_fitted(staff_client, world, job):
    topic = world.topics[0]
    url = reverse("job-topic", args=[job.pk, topic.qid])
    before = staff_client.get(url)
    assert "The job's relevance model is not fitted yet." in before.text
    job_model_fit(job=job)
    page = staff_client.get(url).text
    docs, p = job_probabilities(job=job)[topic.pk]
    assert f"<dd>{p.sum():.2f}</dd>" in page
    assert "no statAP sample of this pool" in page
    # Unjudged documents by p, descending, with their evidence.
    raw = dict(
        zip(
            docs.tolist(),
            job_probabilities(job=job, override=False)[topic.pk][1].tolist(),
            strict=True,
        )
    )
    judged = set(
        Judgment.objects.filter(topic=topic).values_list("document_id", flat=True)
    )
    docnos = {d.docno: d.pk for d in world.pooled[topic.qid]}
    listed = _rows(page, "Probability of relevance")
    assert len(listed) == len(docs) - len(judged)
    values = [raw[docnos[d]] for d in listed]
    assert values == sorted(values, reverse=True)
    assert not judged & {docnos[d] for d in listed}
    assert "<mark>" in page
    # The reliability diagram has axes, ticks and labels.
    assert "Predicted p (mean of the bin)" in page
    assert "Observed rate of relevance" in page
    diagram = chart_root(page, "reliability")
    for which in ("x", "y"):
        ticks = [t.text for t in diagram.iter(f"{SVG}text")
                 if t.get("class") == f"{which}-tick"]  # fmt: skip
        assert ticks == ["0", "0.2", "0.4", "0.6", "0.8", "1"]
    # So do the score histograms and the found curve.
    for label in ("Min-span score", "Documents", "Judged non-relevant found",
                  "Judged relevant found"):  # fmt: skip
        assert f">{label}</text>" in page


def test_the_model_rule_is_the_default_once_fitted(staff_client, world, job):
    job_model_fit(job=job)
    topic = world.topics[0]
    page = staff_client.get(reverse("job-topic", args=[job.pk, topic.qid])).text
    assert "documents inferred relevant under p &gt;= 0.5" in page
    docs, p = job_probabilities(job=job, override=False)[topic.pk]
    docnos = {d.pk: d.docno for d in world.pooled[topic.qid]}
    inferred = {
        docnos[d] for d, v in zip(docs.tolist(), p.tolist(), strict=True) if v >= 0.5
    }
    assert set(_rows(page, "Top inferred documents")) <= inferred


def test_the_job_page_fits_warns_and_downloads(staff_client, world, job):
    Nugget.objects.filter(topic=world.topics[2]).delete()
    detail = reverse("job-detail", args=[job.pk])
    page = staff_client.get(detail).text
    assert "Warning: topics 8 have no nuggets" in page
    assert "Not fitted yet" in page
    response = staff_client.post(reverse("job-fit", args=[job.pk]), follow=True)
    assert "Fitted on 36 judged documents" in response.text
    assert "Reliability of p: 36 judged documents" in response.text
    download = staff_client.get(reverse("job-export", args=[job.pk, "probabilistic"]))
    assert download.status_code == 200
    lines = download.content.decode().splitlines()
    assert len(lines) == 72
    assert all(len(line.split()) == 6 for line in lines)
    topic = world.topics[2]
    page = staff_client.get(
        reverse("job-topic", args=[job.pk, topic.qid]),
        {"kind": "threshold", "threshold": 0.5},
    ).text
    assert "This topic has no nuggets" in page
    assert "The rule cannot decide this topic (no nuggets)." in page


def test_assessors_cannot_fit(assessor_client, job):
    response = assessor_client.post(reverse("job-fit", args=[job.pk]))
    assert response.status_code == 403
