"""Semantic evidence on the judging page: beside each topic nugget's matcher score, the
document's sentence nearest to it in meaning, from the stored embeddings of the real
packaged model; nothing is embedded while the assessor waits."""

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from nuggets_app.inference.services.embeddings import documents_embed, nuggets_embed
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS
from nuggets_app.models import UnitEmbedding
from tests import factories as f
from tests.integration.judging_world import build_world

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
    url = reverse("judge-data", args=[world.assignment.pk, world.position(docno)])
    return {n["text"]: n for n in client.get(url).json()["nuggets"]}


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
    listed = json.loads(
        re.search(
            r'<script id="judge-nuggets" type="application/json">(.*?)</script>',
            page.text,
            re.S,
        ).group(1)
    )
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
