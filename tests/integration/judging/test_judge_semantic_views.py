"""Semantic evidence on the judging page: beside each topic nugget's matcher score, the
document's sentence nearest to it in meaning, from the stored embeddings of the real
packaged model; nothing is embedded while the assessor waits (without a broker, the
process's background thread embeds a saved nugget after the response)."""

import json
import re
import threading
import uuid

import numpy as np
import pytest
from django.urls import reverse

from nuggets_app.inference.services.embeddings import (
    documents_embed,
    nugget_vectors,
    nuggets_embed,
)
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS
from nuggets_app.models import NuggetEmbedding, UnitEmbedding
from tests import factories as f
from tests.integration.worlds.judging import build_world

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE
    ),
]

NUGGET_TEXTS = (
    "wind tunnel models must be geometrically similar to the aircraft",
    "heating of the structure changes how the wing deforms",
)


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    world = build_world(shared_data, assessor, other_assessor)
    other = world.docs["29"]
    for text, who in zip(NUGGET_TEXTS, (assessor, other_assessor), strict=True):
        f.NuggetFactory(
            topic=world.topic, document=other, assessor=who, start=0, end=10,
            text=text, keywords=[],
        )  # fmt: skip
    return world


def _data(client, world, docno):
    """The document's nuggets by text, each nearest sentence put back in its nugget
    from the document's sentences (sent once each, by start offset), as the page
    does."""
    url = reverse("judge-data", args=[world.assignment.pk, world.position(docno)])
    data = client.get(url).json()
    for n in data["nuggets"]:
        if n["semantic"]:
            n["semantic"]["sentence"] = data["sentences"][str(n["semantic"]["start"])]
    return {n["text"]: n for n in data["nuggets"]}


def test_each_nugget_shows_the_documents_nearest_sentence_once_embedded(
    world, assessor_client
):
    doc = world.docs["184"]
    before = _data(assessor_client, world, "184")
    assert all(before[t]["semantic"] is None for t in NUGGET_TEXTS)
    assert not UnitEmbedding.objects.filter(document=doc).exists()  # none made

    documents_embed([doc], max_words=DEFAULT_MAX_WORDS)
    nuggets_embed(nugget_ids=[n["id"] for n in before.values()])
    after = _data(assessor_client, world, "184")
    rows = UnitEmbedding.objects.filter(document=doc).order_by("start")
    spans = [(r.start, r.end) for r in rows if r.end > r.start]
    encoder = embeddings.load_encoder()
    windows = encoder.embed([doc.text[s:e] for s, e in spans])
    for text in NUGGET_TEXTS:
        sims = windows @ encoder.embed([text])[0]
        best = int(np.argmax(sims))
        found = after[text]["semantic"]
        assert (found["start"], found["end"]) == spans[best]
        assert found["sentence"] == doc.text[slice(*spans[best])]
        assert found["similarity"] == pytest.approx(float(sims[best]), abs=1e-5)

    # The full page carries the same evidence to its script, and the hint says so.
    page = assessor_client.get(
        reverse("judge", args=[world.assignment.pk, world.position("184")])
    )

    def script(name):
        pattern = rf'<script id="{name}" type="application/json">(.*?)</script>'
        return json.loads(re.search(pattern, page.text, re.S).group(1))

    listed, sentences = (
        script("judge-nuggets"),
        script("judge-config")["doc"]["sentences"],
    )
    for n in listed:
        if n["semantic"]:
            n["semantic"]["sentence"] = sentences[str(n["semantic"]["start"])]
    assert {n["text"]: n["semantic"] for n in listed} == {
        t: after[t]["semantic"] for t in after
    }
    assert "the document's sentence nearest in meaning" in page.text


def test_an_edited_nugget_shows_nothing_until_its_new_text_is_embedded(
    world, assessor_client
):
    from nuggets_app.models import Nugget

    doc = world.docs["184"]
    documents_embed([doc], max_words=DEFAULT_MAX_WORDS)
    nugget = Nugget.objects.get(text=NUGGET_TEXTS[0])
    nuggets_embed(nugget_ids=[nugget.pk])
    assert _data(assessor_client, world, "184")[NUGGET_TEXTS[0]]["semantic"]
    Nugget.objects.filter(pk=nugget.pk).update(text="an edited nugget text")
    assert (
        _data(assessor_client, world, "184")["an edited nugget text"]["semantic"]
        is None
    )


PHRASE = "thermo-aeroelastic similarity"


def _save_phrase(client, world):
    """Save :data:`PHRASE` of document 184 as a nugget, as the judging page does."""
    start = world.docs["184"].text.index(PHRASE)
    url = reverse("nugget-create", args=[world.assignment.pk, world.position("184")])
    response = client.post(
        url,
        {"start": start, "end": start + len(PHRASE), "span_text": PHRASE,
         "client_uuid": str(uuid.uuid4())},
    )  # fmt: skip
    assert response.status_code == 201
    return response


@pytest.fixture
def no_broker(monkeypatch):
    """Tasks as without ``REDIS_URL``: Celery would run them inside the caller."""
    from nuggets_app.celery import app

    monkeypatch.setitem(app.conf, "task_always_eager", True)


def test_without_a_broker_a_saved_nugget_is_embedded_after_the_response(
    transactional_db, shared_data, assessor, other_assessor, client, no_broker,
    monkeypatch,
):  # fmt: skip
    from nuggets_app.operations.background import background_wait

    world = build_world(shared_data, assessor, other_assessor)
    client.force_login(assessor)
    # The model waits for the test's word: run inside the request, it would hold the
    # response, then fail it.
    gate = threading.Event()
    real = embeddings.load_encoder

    def gated():
        if not gate.wait(15):
            raise RuntimeError("the model ran before the response")
        return real()

    monkeypatch.setattr(embeddings, "load_encoder", gated)
    response = _save_phrase(client, world)
    assert response.json()["semantic_pending"] is True
    nugget_id = response.json()["id"]
    assert not NuggetEmbedding.objects.filter(nugget_id=nugget_id).exists()
    listed = _data(client, world, "1")
    assert listed[PHRASE]["semantic_pending"] is True

    gate.set()
    assert background_wait(60)
    assert NuggetEmbedding.objects.filter(nugget_id=nugget_id).count() == 1
    np.testing.assert_allclose(
        nugget_vectors([nugget_id])[nugget_id], real().embed([PHRASE])[0], atol=1e-5
    )
    assert _data(client, world, "1")[PHRASE]["semantic_pending"] is False


def test_a_web_process_leaves_the_model_to_its_child_process(
    transactional_db, shared_data, assessor, other_assessor, client, no_broker,
    monkeypatch,
):  # fmt: skip
    """As the WSGI entry point sets it up: the background thread's embedding runs in
    the child process; this process never loads or runs the model."""
    from nuggets_app.operations.background import background_wait
    from nuggets_app.operations.encoder_process import EncoderProcess

    real = embeddings.load_encoder

    def refused():
        raise RuntimeError("the web process ran the model")

    monkeypatch.setattr(embeddings, "load_encoder", refused)
    child = EncoderProcess()
    embeddings.encoder_install(child)
    world = build_world(shared_data, assessor, other_assessor)
    client.force_login(assessor)
    try:
        response = _save_phrase(client, world)
        assert background_wait(60)
        assert child.pid is not None
    finally:
        embeddings.encoder_install(None)
        child.close()
    nugget_id = response.json()["id"]
    np.testing.assert_allclose(
        nugget_vectors([nugget_id])[nugget_id], real().embed([PHRASE])[0], atol=1e-5
    )
    assert _data(client, world, "1")[PHRASE]["semantic_pending"] is False
