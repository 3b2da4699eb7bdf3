"""The semantic evidence on a job's pages: the nearest sentence of the document to
each nugget with the real packaged model, and the "off" line without the extra."""

import numpy as np
import pytest
from django.urls import reverse

from nuggets_app.inference.services.embeddings import (
    documents_embed_missing,
    nuggets_embed,
)
from nuggets_app.inference.services.job_model import job_model_fit
from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import text_windows
from nuggets_app.models import Judgment, MatchResult, Nugget, UnitEmbedding
from tests.integration.worlds.cranfield_pool import cranfield_world, run_inline

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(shared_data, assessor, settings):
    world = cranfield_world(
        shared_data, assessor, qids=("3", "4", "8"), per_topic=14, judge=8
    )
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    return run_inline(job)


@pytest.mark.skipif(not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE)
def test_the_document_page_shows_the_nearest_sentence_to_each_nugget(staff_client, job):
    topic = job.topics.order_by("qid").first()
    job_model_fit(job=job)
    judged = Judgment.objects.filter(topic=topic).values_list("document_id", flat=True)
    result = (
        MatchResult.objects.filter(job=job, topic=topic)
        .exclude(document_id__in=list(judged))
        .order_by("pk")
        .first()
    )
    url = reverse("job-document", args=[job.pk, topic.qid, result.document_id])
    # The page embeds nothing: it says the embeddings are pending and asks for them.
    pending = staff_client.get(url)
    assert "embeddings pending" in pending.text
    assert 'id="semantic-title"' not in pending.text
    assert not UnitEmbedding.objects.filter(document_id=result.document_id).exists()
    nuggets = Nugget.objects.filter(topic=topic)
    documents_embed_missing(document_ids=[result.document_id])
    nuggets_embed(nugget_ids=[n.pk for n in nuggets])
    page = staff_client.get(url)
    assert page.status_code == 200
    assert "embeddings pending" not in page.text
    assert "semantic evidence: on (all-MiniLM-L6-v2)" in page.text
    title = page.text.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "<" not in title  # the evidence table is in the page, not in its title
    assert page.text.count('id="semantic-title"') == 1
    text = result.document.text
    windows = text_windows(text)
    encoder = embeddings.load_encoder()
    window_vectors = encoder.embed([text[s:e] for s, e in windows])
    for nugget in Nugget.objects.filter(topic=topic):
        sims = window_vectors @ encoder.embed([nugget.text])[0]
        best = int(np.argmax(sims))
        start, end = windows[best]
        assert f'data-span="{start}-{end}"' in page.text
        assert f"{max(0.0, float(sims[best])):.3f}" in page.text
    topic_page = staff_client.get(reverse("job-topic", args=[job.pk, topic.qid]))
    assert "semantic evidence: on" in topic_page.text
    assert "Semantic evidence: the nearest sentence (similarity)" in topic_page.text
    # The document embedded above shows its nearest sentence among the unjudged ones.
    nugget_vectors = encoder.embed(
        [n.text for n in Nugget.objects.filter(topic=topic).order_by("pk")]
    )
    nearest = float((nugget_vectors @ window_vectors.T).max())
    assert f"({max(0.0, nearest):.3f}, nugget" in topic_page.text


def test_without_the_extra_the_pages_say_semantic_evidence_is_off(
    staff_client, job, monkeypatch
):
    monkeypatch.setattr(embeddings, "model_zip_path", lambda: None)
    topic = job.topics.order_by("qid").first()
    result = MatchResult.objects.filter(job=job, topic=topic).first()
    for url in (
        reverse("job-document", args=[job.pk, topic.qid, result.document_id]),
        reverse("job-topic", args=[job.pk, topic.qid]),
    ):
        page = staff_client.get(url)
        assert page.status_code == 200
        assert "semantic evidence: off (install requirements-semantic.txt)" in page.text
        assert "Semantic evidence: the nearest sentence" not in page.text
