"""Embedding jobs run by a real Celery worker on PostgreSQL and Redis, with the real
packaged model (skipped only without the semantic extra, which CI installs)."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from nuggets_app.inference.services.embeddings import (
    document_windows,
    embed_chunk_run,
    embedding_job_launch,
    embedding_job_resume,
    nugget_vectors,
    nuggets_embed,
)
from nuggets_app.judging.services.nuggets import nugget_save, nugget_update
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import text_windows
from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    EmbeddingJob,
    NuggetEmbedding,
    Sample,
    SampleDocument,
    UnitEmbedding,
)
from tests.integration.worlds.cranfield_pool import cranfield_world, wait_until

pytestmark = [
    pytest.mark.worker,
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE
    ),
]


def _job(job: EmbeddingJob) -> EmbeddingJob:
    job.refresh_from_db()
    return job


def test_a_job_embeds_every_window_once_on_the_worker(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    settings.EMBED_CHUNK_SIZE = 10
    world = cranfield_world(shared_data, assessor, per_topic=12)
    docs = list(Document.objects.filter(collection=world.collection).order_by("pk"))
    job = embedding_job_launch(collection=world.collection, max_words=40)
    wait_until(
        lambda: _job(job).status == EmbeddingJob.Status.DONE, 240, "embedding job"
    )
    assert (job.docs_total, job.docs_done) == (len(docs), len(docs))
    expected_windows = {
        d.pk: [tuple(w) for w in text_windows(d.text, max_words=40)] for d in docs
    }
    assert job.units_done == sum(len(w) for w in expected_windows.values())
    stored = document_windows([d.pk for d in docs])
    assert {pk: spans for pk, (spans, _) in stored.items()} == expected_windows
    # The stored vector of a window is the model's embedding of that window's text.
    doc = docs[0]
    spans, vectors = stored[doc.pk]
    direct = embeddings.load_encoder().embed([doc.text[s:e] for s, e in spans])
    np.testing.assert_allclose(vectors, direct, atol=1e-5)

    # Launched again: nothing is left to embed, nothing is embedded twice.
    rows = UnitEmbedding.objects.count()
    again = embedding_job_launch(collection=world.collection, max_words=40)
    assert _job(again).status == EmbeddingJob.Status.DONE
    assert again.docs_total == 0
    assert UnitEmbedding.objects.count() == rows


def test_a_resumed_job_embeds_only_what_is_missing(
    transactional_db, celery_worker, shared_data, assessor, settings
):
    # The first chunks are run by hand, to stop half-way; the resume goes to the worker.
    settings.EMBED_CHUNK_SIZE = 1000
    world = cranfield_world(shared_data, assessor, per_topic=6)
    ids = list(
        Document.objects.filter(collection=world.collection)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    job = EmbeddingJob.objects.create(
        collection=world.collection, model=embeddings.MODEL_NAME, max_words=60,
        docs_total=len(ids),
    )  # fmt: skip
    first = embed_chunk_run(job_id=job.pk, document_ids=ids[:4])
    assert first["documents"] == 4
    assert _job(job).status == EmbeddingJob.Status.RUNNING
    # A redelivered chunk finds its documents embedded and does nothing.
    assert embed_chunk_run(job_id=job.pk, document_ids=ids[:4])["documents"] == 0
    before = set(UnitEmbedding.objects.values_list("pk", flat=True))
    job = embedding_job_resume(job=job)
    wait_until(
        lambda: _job(job).status == EmbeddingJob.Status.DONE, 240, "the resumed job"
    )
    assert job.docs_done == len(ids)
    assert before < set(UnitEmbedding.objects.values_list("pk", flat=True))
    assert set(document_windows(ids)) == set(ids)


def _assessor_nugget(world, assessor):
    """A nugget saved by an assessor assigned to the first topic's first document."""
    topic = world.topics[0]
    doc = world.pooled[topic.qid][0]
    sample = Sample.objects.create(
        pool=world.pool, name="s", method="uniform", size=1, seed=1
    )
    SampleDocument.objects.create(
        sample=sample, topic=topic, document=doc, inclusion_prob=1, order=0
    )
    Assignment.objects.create(sample=sample, topic=topic, assessor=assessor)
    nugget, created = nugget_save(
        assessor=assessor, topic=topic, document=doc, start=0, end=40,
        text="the boundary layer of a flat plate", keywords=[], grade=None,
        aspect="", client_uuid=uuid.uuid4(),
    )  # fmt: skip
    assert created
    return nugget


def test_a_saved_nugget_is_embedded_by_the_worker_and_again_when_edited(
    transactional_db, celery_worker, shared_data, assessor
):
    world = cranfield_world(shared_data, assessor, per_topic=4, nuggets_per_topic=0)
    nugget = _assessor_nugget(world, assessor)
    wait_until(
        lambda: NuggetEmbedding.objects.filter(nugget=nugget).exists(),
        120,
        "the nugget's embedding",
    )
    first = nugget_vectors([nugget.pk])[nugget.pk]
    direct = embeddings.load_encoder().embed([nugget.text])[0]
    np.testing.assert_allclose(first, direct, atol=1e-5)

    nugget = nugget_update(
        assessor=assessor, nugget=nugget, version=nugget.version,
        text="heat transfer in hypersonic flow", keywords=[], grade=None, aspect="",
    )  # fmt: skip
    wait_until(
        lambda: nugget.pk in nugget_vectors([nugget.pk]), 120, "the edited embedding"
    )
    edited = nugget_vectors([nugget.pk])[nugget.pk]
    assert float(edited @ first) < 0.9
    assert NuggetEmbedding.objects.filter(nugget=nugget).count() == 1
    # Embedding again changes nothing.
    assert nuggets_embed(nugget_ids=[nugget.pk]) == 0


def test_the_embed_command_embeds_a_collection_and_prints_the_job(
    transactional_db, celery_worker, shared_data, assessor, settings, capsys
):
    settings.EMBED_CHUNK_SIZE = 4
    world = cranfield_world(shared_data, assessor, per_topic=5, nuggets_per_topic=0)
    call_command("embed", "--collection", world.collection.name, "--wait")
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["status"] == "done"
    count = Document.objects.filter(collection=world.collection).count()
    assert summary["documents"] == f"{count}/{count}"
    assert "semantic evidence: on (all-MiniLM-L6-v2)" in out.err
    status = json.loads(_call("embed", "--status", str(summary["job"]), capsys=capsys))
    assert status == summary


def _call(*args: str, capsys) -> str:
    call_command(*args)
    return capsys.readouterr().out


def test_without_the_extra_nothing_is_launched(db, monkeypatch):
    monkeypatch.setattr(embeddings, "model_zip_path", lambda: None)
    collection = Collection.objects.create(name="c")
    with pytest.raises(CommandError, match=r"off \(install requirements-semantic"):
        call_command("embed", "--collection", "c")
    assert not EmbeddingJob.objects.filter(collection=collection).exists()


def test_a_nugget_is_saved_even_when_the_broker_is_down(
    transactional_db, shared_data, assessor, broker_down
):
    world = cranfield_world(shared_data, assessor, per_topic=2, nuggets_per_topic=0)
    nugget = _assessor_nugget(world, assessor)
    assert not NuggetEmbedding.objects.filter(nugget=nugget).exists()
    # Embedded the first time its vector is needed.
    assert nuggets_embed(nugget_ids=[nugget.pk]) == 1
