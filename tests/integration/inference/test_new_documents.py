"""Documents imported after a job, scored for it (``match --job N --new-documents``):
exactly what a job launched after the import gives them (scores, and the inferred
qrels with ``later``), in batches, resumable."""

from __future__ import annotations

import gzip
import io
import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.imports import collection_import
from nuggets_app.inference.services import unpooled
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import qrels_export
from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.models import Document, MatchResult, UnpooledScore
from tests.integration.worlds.cranfield_pool import cranfield_world, run_inline

pytestmark = pytest.mark.django_db
# Relevant to topic 1 or 2 (Cranfield qrels) and beyond the world's 20 per topic, and two
# that are neither.
NEW = ["462", "858", "859", "875", "876", "879", "948", "864", "877", "901", "902"]


@pytest.fixture
def in_process():
    """The batches run as tasks in this process (the worker path of the same task is
    the evaluation tests')."""
    from nuggets_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def committed(django_capture_on_commit_callbacks, in_process):
    """Run ``action()`` and then what it left for the commit (the batches it sent)."""

    def run(action):
        with django_capture_on_commit_callbacks(execute=True):
            return action()

    return run


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, per_topic=20, nuggets_per_topic=3)


def _launch(world):
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="collection"
    )
    return run_inline(job)


def _import_new(shared_data, tmp_path, collection) -> None:
    """Import real Cranfield documents the world does not hold, through the importer."""
    rows = []
    with gzip.open(shared_data / "cranfield" / "docs.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            if row["docno"] in NEW:
                rows.append(row)
    path = tmp_path / "new.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    collection_import(path=path, name=collection.name)


def test_new_documents_are_scored_as_a_job_launched_after_the_import_scores_them(
    world, shared_data, tmp_path, settings, committed
):
    settings.MATCH_CHUNK_SIZE = 7
    before = _launch(world)
    _import_new(shared_data, tmp_path, world.collection)
    new_ids = set(Document.objects.filter(docno__in=NEW).values_list("pk", flat=True))
    assert len(new_ids) == len(NEW)
    wanted = unpooled.new_documents_wanted(job=before)
    assert {t: set(d) for t, d in wanted.items()} == {
        t.pk: new_ids for t in world.topics
    }
    progress = committed(lambda: unpooled.new_documents_score(job=before))
    assert progress.queued_batches >= len(world.topics)
    assert unpooled.new_documents_progress(job=before).done

    after = _launch(world)
    expected = {
        (r.topic_id, r.document_id): (r.score, r.nugget_id)
        for r in MatchResult.objects.filter(job=after, document_id__in=new_ids)
    }
    scored = {
        (r.topic_id, r.document_id): (r.score, r.nugget_id)
        for r in UnpooledScore.objects.filter(job=before)
    }
    assert scored == expected
    assert any(score > 0 for score, _ in scored.values())
    # The paper rule's inferred qrels decide them as the later job's qrels do.
    rule = DecisionRule(kind="threshold", threshold=0.5)
    lines = [
        {
            line
            for line in qrels_export(
                collection=world.collection, kind="inferred", job=job, rule=rule,
                later=later,
            ).lines
            if line.split()[2] in NEW
        }
        for job, later in ((before, True), (after, False))
    ]  # fmt: skip
    assert lines[0] == lines[1]
    assert len(lines[0]) == len(expected)


def test_scoring_again_resumes_only_what_is_missing(
    world, shared_data, tmp_path, committed
):
    job = _launch(world)
    _import_new(shared_data, tmp_path, world.collection)
    committed(lambda: unpooled.new_documents_score(job=job))
    topic = world.topics[0]
    UnpooledScore.objects.filter(job=job, topic=topic).delete()
    progress = unpooled.new_documents_progress(job=job)
    assert progress.scored == progress.wanted - len(NEW)
    again = committed(lambda: unpooled.new_documents_score(job=job))
    assert again.scored == progress.scored  # counted before this call's batches
    assert again.queued_batches == 1
    assert unpooled.new_documents_progress(job=job).done


def test_the_command_scores_new_documents_and_refuses_a_lone_flag(
    world, shared_data, tmp_path, django_capture_on_commit_callbacks, in_process
):
    job = _launch(world)
    _import_new(shared_data, tmp_path, world.collection)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("match", "--job", str(job.pk), "--new-documents", stdout=out)
    call_command(
        "match", "--job", str(job.pk), "--new-documents", "--wait", "-v0", stdout=out
    )
    pairs = len(NEW) * len(world.topics)
    assert f"{pairs} (topic, new document) pairs" in out.getvalue()
    assert f"{pairs} scored before, 0 batches sent" in out.getvalue()
    assert f"{pairs} new pairs scored" in out.getvalue()
    with pytest.raises(CommandError, match="go together"):
        call_command("match", "--new-documents")


def test_only_staff_press_the_button(
    world, shared_data, tmp_path, client, django_capture_on_commit_callbacks, in_process
):
    from django.contrib.auth.models import Group
    from django.urls import reverse

    from tests.factories import UserFactory

    job = _launch(world)
    _import_new(shared_data, tmp_path, world.collection)
    researcher = UserFactory(username="carol")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(researcher)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert f"0 of {len(NEW) * len(world.topics)}" in page
    assert "score-new-documents" not in page
    url = reverse("job-new-documents", args=[job.pk])
    assert client.post(url).status_code == 403
    staff = UserFactory(username="sam", is_staff=True)
    client.force_login(staff)
    assert (
        "score-new-documents"
        in client.get(reverse("job-detail", args=[job.pk])).content.decode()
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url).status_code == 302
    assert unpooled.new_documents_progress(job=job).done


@pytest.mark.worker
@pytest.mark.timeout(180)
def test_a_worker_scores_the_new_documents_as_the_matcher_does(
    transactional_db, celery_worker, shared_data, assessor, tmp_path
):
    from matcher import MatchOptions, TopicMatcher
    from nuggets_app.inference.services.matching import job_nugget_specs
    from nuggets_app.models import MatchJob
    from tests.integration.worlds.cranfield_pool import wait_for, wait_until

    world = cranfield_world(shared_data, assessor, per_topic=12, nuggets_per_topic=3)
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="collection"
    )
    job = wait_for(job, {MatchJob.Status.DONE, MatchJob.Status.FAILED})
    assert job.status == MatchJob.Status.DONE, job.error
    _import_new(shared_data, tmp_path, world.collection)
    sent = unpooled.new_documents_score(job=job)
    assert sent.queued_batches == len(world.topics)
    wait_until(
        lambda: unpooled.new_documents_progress(job=job).done,
        timeout=120,
        what="the worker to score the new documents",
    )
    options = MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)
    texts = dict(Document.objects.filter(docno__in=NEW).values_list("pk", "text"))
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk), options)
        rows = UnpooledScore.objects.filter(job=job, topic=topic)
        assert rows.count() == len(NEW)
        for row in rows:
            assert row.score == pytest.approx(
                matcher.score(texts[row.document_id]).score
            )
