"""The staff pages over real Cranfield files: staff only (assessors get 403 on every
URL), CSRF, the upload size limit, check then confirm, pools, samples, assignments."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    Pool,
    Run,
    Sample,
    TaskRecord,
    Topic,
)
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw
from nuggets_app.staff import services as staff_tasks
from tests import factories as f
from tests.integration.worlds.cranfield_files import CRANFIELD, load_cranfield

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def world(staff):
    """Cranfield loaded by the command services, a depth-5 pool, a statAP sample."""
    collection = Collection.objects.create(name="cranfield")
    load_cranfield(collection, runs=True)
    pool = pool_build(collection=collection, runs=Run.objects.all(), depth=5, name="p5")
    sample = sample_draw(pool=pool, size=3, method="statap", seed=1, name="s3")
    task = TaskRecord.objects.create(kind="pool", collection=collection)
    return {"collection": collection, "pool": pool, "sample": sample, "task": task}


def staff_urls(world) -> list[str]:
    name = world["collection"].name
    pool, sample, task = world["pool"].pk, world["sample"].pk, world["task"].pk
    return [
        reverse("staff-collections"),
        reverse("staff-collection", args=[name]),
        *(reverse("staff-upload", args=[name, k]) for k in ("documents", "topics", "runs", "qrels")),
        reverse("staff-pool-new", args=[name]),
        reverse("staff-pool", args=[pool]),
        reverse("staff-sample", args=[sample]),
        reverse("staff-sample-extend", args=[sample]),
        reverse("staff-sample-assign", args=[sample]),
        reverse("staff-sample-reassign", args=[sample]),
        reverse("staff-tasks"),
        reverse("staff-task", args=[task]),
        reverse("staff-task-progress", args=[task]),
        reverse("staff-task-confirm", args=[task]),
        reverse("staff-task-cancel", args=[task]),
    ]  # fmt: skip


def test_assessors_are_refused_on_every_staff_url(world, assessor_client):
    for url in staff_urls(world):
        assert assessor_client.get(url).status_code == 403, url
        assert assessor_client.post(url, {"name": "x"}).status_code == 403, url
    assert Collection.objects.count() == 1
    assert TaskRecord.objects.count() == 1


def test_anonymous_users_are_sent_to_the_login_page(world, client):
    for url in staff_urls(world):
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/login/" in response["Location"], url


def test_researchers_who_are_not_staff_are_refused(world, client):
    from django.contrib.auth.models import Group

    researcher = f.UserFactory(username="rita")
    researcher.groups.add(Group.objects.create(name="researchers"))
    client.force_login(researcher)
    assert client.get(reverse("staff-collections")).status_code == 403


def test_staff_pages_render(world, staff_client):
    for url in staff_urls(world):
        if url.endswith(("extend", "assign", "reassign", "confirm", "cancel")):
            continue
        assert staff_client.get(url).status_code == 200, url


def test_posts_need_the_csrf_token(world, staff):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    name = world["collection"].name
    with open(CRANFIELD / "topics.trec", "rb") as handle:
        response = client.post(
            reverse("staff-upload", args=[name, "topics"]),
            {"file": handle, "fmt": "auto"},
        )
    assert response.status_code == 403
    response = client.post(reverse("staff-collections"), {"name": "other"})
    assert response.status_code == 403
    assert TaskRecord.objects.count() == 1
    assert Collection.objects.count() == 1


def test_collection_page_of_an_empty_collection_says_what_to_do_first(staff_client):
    response = staff_client.post(reverse("staff-collections"), {"name": "fresh"})
    assert response.status_code == 302
    page = staff_client.get(response["Location"]).content.decode()
    assert "Upload the documents" in page
    assert "Build a pool" in page


def test_upload_over_the_size_limit_is_refused_with_a_message(staff_client, settings):
    settings.UPLOAD_MAX_BYTES = 20_000
    Collection.objects.create(name="cranfield")
    with open(CRANFIELD / "topics.trec", "rb") as handle:
        response = staff_client.post(
            reverse("staff-upload", args=["cranfield", "topics"]),
            {"file": handle, "fmt": "auto"},
        )
    assert response.status_code == 413
    assert "larger than the limit of 20000 bytes" in response.content.decode()
    assert TaskRecord.objects.count() == 0
    assert Topic.objects.count() == 0


def test_upload_check_then_confirm_through_the_pages(staff_client):
    Collection.objects.create(name="cranfield")
    with open(CRANFIELD / "docs.trec.gz", "rb") as handle:
        response = staff_client.post(
            reverse("staff-upload", args=["cranfield", "documents"]),
            {"file": handle, "fmt": "auto"},
        )
    assert response.status_code == 302
    task = TaskRecord.objects.get()
    assert response["Location"] == reverse("staff-task", args=[task.pk])
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")  # what the worker does
    page = staff_client.get(response["Location"]).content.decode()
    assert "No problem found" in page
    assert 'id="task-confirm"' in page
    assert Document.objects.count() == 0

    staff_client.post(reverse("staff-task-confirm", args=[task.pk]))
    staff_tasks.staff_task_run(task_id=task.pk, phase="import")
    task.refresh_from_db()
    assert task.status == "done"
    assert Document.objects.count() == task.summary["documents"]
    progress = staff_client.get(reverse("staff-task-progress", args=[task.pk])).json()
    assert progress["status"] == "done"
    assert progress["final"]


def test_a_refused_upload_shows_its_problems_and_no_import_button(staff_client):
    Collection.objects.create(name="cranfield")
    bad = SimpleUploadedFile("bad.qrels", b"1 0 184 3\n1 0 29\n")
    staff_client.post(
        reverse("staff-upload", args=["cranfield", "qrels"]),
        {"file": bad, "name": "q", "kind": "auto"},
    )
    task = TaskRecord.objects.get()
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    page = staff_client.get(reverse("staff-task", args=[task.pk])).content.decode()
    assert re.search(r"bad\.qrels:1: unknown topic", page)
    assert re.search(r"bad\.qrels:2: wrong number of columns", page)
    assert 'id="task-confirm"' not in page
    staff_client.post(reverse("staff-task-confirm", args=[task.pk]))
    task.refresh_from_db()
    assert task.status == "refused"


@pytest.mark.parametrize(
    ("kind", "content", "fields", "fix"),
    [
        (
            "runs", b"1 Q0 nope 1 1.0 tag\n", {},
            "upload the runs again with \u201cSkip documents not in the "
            "collection\u201d ticked",
        ),
        (
            "nuggets", b'{"qid": "77", "text": "a fact"}\n', {"fmt": "auto"},
            "upload it again with \u201cCreate topics\u201d ticked",
        ),
    ],
)  # fmt: skip
def test_a_refused_upload_names_the_option_that_fixes_it(
    staff_client, kind, content, fields, fix
):
    collection = Collection.objects.create(name="tiny")
    f.TopicFactory(collection=collection, qid="1")
    name = "f.run" if kind == "runs" else "bank.jsonl"
    upload = SimpleUploadedFile(name, content)
    field = "files" if kind == "runs" else "file"
    staff_client.post(
        reverse("staff-upload", args=["tiny", kind]), {field: upload, **fields}
    )
    task = TaskRecord.objects.get()
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    page = staff_client.get(reverse("staff-task", args=[task.pk])).content.decode()
    assert "unknown" in page
    assert fix in page
    assert "Fix the file and upload again" not in page


def test_pool_and_sample_forms_start_tasks_with_the_command_services(
    world, staff_client
):
    collection = world["collection"]
    runs = list(Run.objects.order_by("name")[:2])
    response = staff_client.post(
        reverse("staff-pool-new", args=[collection.name]),
        {"name": "p10", "depth": 10, "runs": [r.pk for r in runs]},
    )
    task = TaskRecord.objects.get(kind="pool", params__name="p10")
    assert response["Location"] == reverse("staff-task", args=[task.pk])
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    pool = Pool.objects.get(name="p10")
    assert sorted(pool.runs.values_list("pk", flat=True)) == [r.pk for r in runs]

    page = staff_client.post(
        reverse("staff-pool", args=[pool.pk]),
        {"name": "s10", "method": "statap", "size": "10%", "seed": 3, "preview": "1"},
    )
    assert page.status_code == 200
    assert not TaskRecord.objects.filter(kind="sample")
    size = page.context["preview"]
    rows = page.context["rows"]
    assert all(would == min(size, row.pool) for row, would in rows)

    staff_client.post(
        reverse("staff-pool", args=[pool.pk]),
        {"name": "s10", "method": "statap", "size": "10%", "seed": 3, "draw": "1"},
    )
    task = TaskRecord.objects.get(kind="sample")
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    sample = Sample.objects.get(pool=pool, name="s10")
    assert sample.size == size
    page = staff_client.get(reverse("staff-pool", args=[pool.pk]))
    for row, _ in page.context["rows"]:
        assert row.samples == [min(size, row.pool)]

    staff_client.post(reverse("staff-sample-extend", args=[sample.pk]), {"extra": 2})
    task = TaskRecord.objects.get(kind="extend")
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    sample.refresh_from_db()
    assert sample.size == size + 2


def test_the_pool_form_pools_the_topics_asked_and_names_unknown_ones(
    world, staff_client
):
    collection = world["collection"]
    url = reverse("staff-pool-new", args=[collection.name])
    page = staff_client.post(
        url, {"name": "some", "depth": 5, "all_runs": "on", "topics": "2 zz 1 yy"}
    )
    assert page.status_code == 200
    assert "unknown topics in collection cranfield: zz, yy" in page.content.decode()
    assert not TaskRecord.objects.filter(kind="pool", params__name="some")

    staff_client.post(
        url, {"name": "some", "depth": 5, "all_runs": "on", "topics": "2 1 2"}
    )
    task = TaskRecord.objects.get(kind="pool", params__name="some")
    assert task.params["topics"] == ["2", "1"]
    assert "2 topics" in task.label
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    pool = Pool.objects.get(name="some")
    pooled = set(pool.documents.values_list("topic__qid", flat=True))
    assert pooled == {"1", "2"}
    # The same documents as the whole pool holds for those topics.
    whole = world["pool"].documents.filter(topic__qid__in=["1", "2"])
    assert sorted(pool.documents.values_list("document_id", "prior")) == sorted(
        whole.values_list("document_id", "prior")
    )


def test_assign_with_overlap_then_reassign_unfinished_work(world, staff_client):
    sample = world["sample"]
    alice = f.UserFactory(username="alice")
    bob = f.UserFactory(username="bob")
    carol = f.UserFactory(username="carol")
    response = staff_client.post(
        reverse("staff-sample-assign", args=[sample.pk]),
        {"assessors": [alice.pk, bob.pk], "overlap": 2, "topics": "1 2 3"},
    )
    assert response.status_code == 302
    assert sorted(
        Assignment.objects.values_list("topic__qid", "assessor__username")
    ) == sorted((q, u) for q in "123" for u in ("alice", "bob"))

    page = staff_client.get(reverse("staff-sample", args=[sample.pk]))
    rows = {row.username: row for row in page.context["progress"]}
    assert rows["alice"].topics == 3
    assert rows["alice"].judged == 0

    staff_client.post(
        reverse("staff-sample-reassign", args=[sample.pk]),
        {"source": bob.pk, "target": carol.pk, "topics": "2"},
    )
    assert sorted(
        Assignment.objects.filter(topic__qid="2").values_list(
            "assessor__username", flat=True
        )
    ) == ["alice", "carol"]

    # An assessor still sees only their own topics.
    client = Client()
    client.force_login(carol)
    page = client.get(reverse("assessor-home"))
    assert [p.assignment.topic.qid for p in page.context["progress"]] == ["2"]


def test_cancel_a_checked_upload_from_its_page_discards_its_files(staff_client):
    Collection.objects.create(name="cranfield")
    with open(CRANFIELD / "topics.trec", "rb") as handle:
        staff_client.post(
            reverse("staff-upload", args=["cranfield", "topics"]),
            {"file": handle, "fmt": "auto"},
        )
    task = TaskRecord.objects.get()
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    stored = task.files[0]["path"]
    response = staff_client.post(reverse("staff-task-cancel", args=[task.pk]))
    assert response.status_code == 302
    task.refresh_from_db()
    assert task.status == "cancelled"
    assert not Path(stored).exists()
    assert staff_client.post(reverse("staff-task-confirm", args=[task.pk]))
    task.refresh_from_db()
    assert task.status == "cancelled"
    assert Topic.objects.count() == 0


def test_tasks_page_lists_who_started_what_and_its_errors(world, staff_client, staff):
    collection = world["collection"]
    bad = SimpleUploadedFile("bad.run", b"1 Q0 no-such-doc 1 2.5 tag\n")
    task = staff_tasks.upload_task_start(
        kind="runs", collection=collection, user=staff, files=[bad]
    )
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    page = staff_client.get(reverse("staff-tasks")).content.decode()
    assert "Import runs: bad.run into cranfield" in page
    assert "refused" in page
    assert "1 problem<" in page
    assert staff.get_username() in page


def test_subtopic_qrels_upload_through_the_page_with_their_kind(staff_client):
    collection = Collection.objects.create(name="cranfield")
    load_cranfield(collection)
    url = reverse("staff-upload", args=["cranfield", "qrels"])
    assert 'value="subtopics"' in staff_client.get(url).content.decode()
    diversity = SimpleUploadedFile("div.qrels", b"1 1 184 1\n1 2 184 1\n1 2 29 0\n")
    staff_client.post(url, {"file": diversity, "name": "div", "kind": "subtopics"})
    task = TaskRecord.objects.get()
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    task.refresh_from_db()
    assert task.summary["kind"] == "subtopics"
    staff_tasks.upload_task_confirm(task=task)
    staff_tasks.staff_task_run(task_id=task.pk, phase="import")
    qrels = collection.qrels.get(name="div")
    assert qrels.kind == "subtopics"
    entries = qrels.entries.order_by("subtopic", "document__docno")
    assert [(e.subtopic, e.document.docno, e.relevance) for e in entries] == [
        ("1", "184", 1),
        ("2", "184", 1),
        ("2", "29", 0),
    ]
