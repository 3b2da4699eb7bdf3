"""The demo as a new user meets it, judged and fitted: ``manage.py demo``, alice judges
every drawn document of every topic with the demo's own qrels, bob judges the same
documents of topic 1 alike, both call ``demo-060`` (topic 1) non-relevant, topic 1's
assessor highlights a nugget in a judged relevant document through the judging
service, a matching job runs over the demo pool (in this process) and its relevance
model is fitted."""

from __future__ import annotations

import io
import uuid
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.management import call_command

from nuggets_app.collection.services.suite_runs import qrels_read
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.inference.services.job_model import features_cache_clear, job_model_fit
from nuggets_app.inference.services.matching import (
    chunks,
    launch,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.judging.services.nuggets import nugget_save
from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    Judgment,
    MatchJob,
    Nugget,
    Sample,
    SampleDocument,
    Topic,
)

JUDGED_NON_RELEVANT = "demo-060"


@dataclass
class DemoWorld:
    job: MatchJob
    sample: Sample
    collection: Collection
    nugget: Nugget


def demo_world(monkeypatch) -> DemoWorld:
    """The judged, matched and fitted demo (see the module's docstring)."""
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    collection = Collection.objects.get(name="demo")
    sample = Sample.objects.get(name="demo-statap15")
    users = get_user_model().objects
    alice, bob = users.get(username="alice"), users.get(username="bob")
    truth = qrels_read(DATA_DIR / "qrels.txt")
    rows = list(
        SampleDocument.objects.filter(sample=sample).select_related("topic", "document")
    )
    judgments = [
        Judgment(
            topic=row.topic,
            document=row.document,
            assessor=assessor,
            relevance=truth.get(row.topic.qid, {}).get(row.document.docno, 0),
        )
        for row in rows
        for assessor in (alice, bob)
        if assessor == alice or row.topic.qid == "1"
    ]
    topic = Topic.objects.get(collection=collection, qid="1")
    odd = Document.objects.get(collection=collection, docno=JUDGED_NON_RELEVANT)
    judgments = [
        j for j in judgments if not (j.topic == topic and j.document == odd)
    ] + [
        Judgment(topic=topic, document=odd, assessor=a, relevance=0)
        for a in (alice, bob)
    ]
    Judgment.objects.bulk_create(judgments)
    relevant = next(
        row.document
        for row in sorted(rows, key=lambda r: r.document.docno)
        if row.topic == topic and truth["1"].get(row.document.docno, 0) > 0
    )
    sentence = relevant.text.split(". ")[0]
    owner = (
        Assignment.objects.filter(sample=sample, topic=topic)
        .order_by("assessor__username")
        .first()
    )
    assert owner is not None
    nugget, _ = nugget_save(
        assessor=owner.assessor,
        topic=topic,
        document=relevant,
        start=0,
        end=len(sentence),
        text=sentence,
        keywords=[],
        grade=None,
        aspect="",
        client_uuid=uuid.uuid4(),
    )
    job = match_job_launch(
        collection=collection,
        topics=list(collection.topics.all()),
        source=MatchJob.Source.POOL,
        pool=sample.pool,
        name="demo job",
    )
    job = match_job_finish_here(job)
    features_cache_clear()
    job_model_fit(job=job)
    job.refresh_from_db()
    return DemoWorld(job=job, sample=sample, collection=collection, nugget=nugget)
