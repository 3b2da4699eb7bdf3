"""Browser uploads on real Cranfield files: the check writes nothing, the import runs
the command's services all or nothing, cancel rolls back, zips are unpacked safely."""

from __future__ import annotations

import gzip
import io
import json
import stat
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from nuggets_app.collection.services import imports, uploads
from nuggets_app.importers import parse_collection, parse_run
from nuggets_app.models import (
    Collection,
    Document,
    Nugget,
    Run,
    RunEntry,
    TaskRecord,
)
from nuggets_app.operations.services.task_records import (
    task_record_cancel,
    task_status_text,
)
from nuggets_app.staff import services as staff_tasks
from tests.conftest import TEST_DATA
from tests.integration.worlds.cranfield_files import (
    CRANFIELD,
    RUNS,
    broken_run,
    load_cranfield,
)

pytestmark = pytest.mark.django_db


def upload(path: Path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def start(kind, collection, staff, files, **params) -> TaskRecord:
    return staff_tasks.upload_task_start(
        kind=kind, collection=collection, user=staff, files=files, params=params
    )


def run_phase(task: TaskRecord, phase: str) -> TaskRecord:
    staff_tasks.staff_task_run(task_id=task.pk, phase=phase)
    task.refresh_from_db()
    return task


@pytest.fixture(autouse=True)
def _data_dir(settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture
def collection(db) -> Collection:
    return Collection.objects.create(name="cranfield")


@pytest.fixture
def loaded(collection, staff) -> Collection:
    """Cranfield documents and topics, loaded by the services the commands use."""
    return load_cranfield(collection)


def test_check_reads_everything_and_writes_nothing_until_confirmed(collection, staff):
    task = start("documents", collection, staff, [upload(CRANFIELD / "docs.trec.gz")])
    stored = Path(task.files[0]["path"])
    assert stored.is_file()
    assert stored.read_bytes() == (CRANFIELD / "docs.trec.gz").read_bytes()

    task = run_phase(task, "check")

    expected = sum(1 for _ in parse_collection(CRANFIELD / "docs.trec.gz"))
    assert task.status == TaskRecord.Status.CHECKED
    assert task.problems == []
    assert task.summary["documents"] == expected
    assert task.summary["new"] == expected
    assert Document.objects.count() == 0

    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")

    assert task.status == TaskRecord.Status.DONE, task.error
    assert Document.objects.filter(collection=collection).count() == expected
    assert "docs.trec.gz" in task.result["lines"][0]
    assert not stored.exists()  # the stored upload is removed once imported


def test_a_second_check_counts_the_documents_already_there(collection, staff):
    imports.collection_import(path=CRANFIELD / "docs.trec.gz", name=collection.name)
    task = start("documents", collection, staff, [upload(CRANFIELD / "docs.trec.gz")])
    task = run_phase(task, "check")
    assert task.summary["new"] == 0
    assert task.summary["existing (replaced)"] == Document.objects.count()


def test_check_lists_every_problem_as_file_line_and_refuses(loaded, staff, tmp_path):
    task = start("runs", loaded, staff, [upload(broken_run(tmp_path)), upload(RUNS[1])])
    task = run_phase(task, "check")

    assert task.status == TaskRecord.Status.REFUSED
    starts = [line.split(": ")[0] for line in task.problems]
    assert starts == ["broken.run:3", "broken.run:5", "broken.run:7"]
    assert "unknown document" in task.problems[2]
    assert "uploads" not in "".join(task.problems)  # no stored paths shown
    assert Run.objects.count() == 0
    with pytest.raises(staff_tasks.TaskStateError):
        staff_tasks.upload_task_confirm(task=task)


def test_runs_import_all_or_nothing_across_files(loaded, staff):
    task = start("runs", loaded, staff, [upload(path) for path in RUNS])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED, task.problems
    assert [row["lines"] for row in task.summary["files"]] == [
        sum(1 for _ in parse_run(path)) for path in RUNS
    ]
    # The last file changes between check and import (a document it names is gone).
    last = Path(task.files[-1]["path"])
    lines = gzip.decompress(last.read_bytes()).decode().splitlines()
    cols = lines[-1].split()
    lines[-1] = " ".join([*cols[:2], "gone-since-the-check", *cols[3:]])
    last.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))

    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")

    assert task.status == TaskRecord.Status.FAILED
    assert task.error.startswith(f"{last.name}:{len(lines)}: unknown document")
    assert Run.objects.count() == 0
    assert RunEntry.objects.count() == 0


def test_cancel_during_import_rolls_everything_back(
    collection, staff, settings, monkeypatch
):
    settings.IMPORT_BATCH_SIZE = 100
    monkeypatch.setattr(
        "nuggets_app.operations.services.task_records._CHECK_EVERY_SECONDS", 0
    )
    task = start("documents", collection, staff, [upload(CRANFIELD / "docs.trec.gz")])
    task = run_phase(task, "check")
    staff_tasks.upload_task_confirm(task=task)
    real = imports._upsert_documents
    batches = []

    def upsert_then_cancel(rows):
        real(rows)
        batches.append(len(rows))
        if len(batches) == 2:  # the admin presses Cancel while it runs
            TaskRecord.objects.filter(pk=task.pk).update(cancel_requested=True)

    monkeypatch.setattr(imports, "_upsert_documents", upsert_then_cancel)
    task = run_phase(task, "import")

    assert task.status == TaskRecord.Status.CANCELLED
    assert len(batches) == 2
    assert Document.objects.count() == 0


def test_cancel_before_confirming_ends_the_task(collection, staff):
    task = start("topics", collection, staff, [upload(CRANFIELD / "topics.trec")])
    task = run_phase(task, "check")
    task = task_record_cancel(task=task)
    assert task.status == TaskRecord.Status.CANCELLED
    with pytest.raises(staff_tasks.TaskStateError):
        staff_tasks.upload_task_confirm(task=task)


def make_zip(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def cranfield_texts(count: int) -> dict[str, bytes]:
    docs = list(parse_collection(CRANFIELD / "docs.trec.gz"))[:count]
    return {f"cran/{doc.docno}.txt": doc.text.encode() for doc in docs}


def test_zip_of_text_files_is_checked_and_imported(collection, staff):
    texts = cranfield_texts(30)
    data = make_zip(texts)
    task = start("documents", collection, staff, [SimpleUploadedFile("cran.zip", data)])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED, task.problems
    assert task.summary["documents"] == len(texts)
    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")
    assert task.status == TaskRecord.Status.DONE, task.error
    stored = dict(Document.objects.values_list("docno", "text"))
    assert stored == {
        Path(name).stem: text.decode().strip() for name, text in texts.items()
    }


@pytest.mark.parametrize(
    ("entries", "links", "problem"),
    [
        ({"../evil.txt": b"x"}, (), "'..'"),
        ({"docs/../../evil.txt": b"x"}, (), "'..'"),
        ({"/etc/evil.txt": b"x"}, (), "absolute path"),
        ({"C:/evil.txt": b"x"}, (), "absolute path"),
        ({"a.txt": b"x"}, ("link.txt",), "symbolic link"),
    ],
)
def test_zip_path_tricks_are_refused_whole(tmp_path, entries, links, problem):
    archive = tmp_path / "docs.zip"
    archive.write_bytes(make_zip({"fine.txt": b"fine", **entries}, links))
    dest = tmp_path / "out"
    with pytest.raises(uploads.UploadError, match=problem):
        uploads.zip_extract(path=archive, dest=dest, max_bytes=10**9, max_files=100)
    assert not dest.exists()
    assert not (tmp_path / "evil.txt").exists()


def test_zip_bomb_is_refused_by_its_unpacked_size(tmp_path):
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(make_zip({"zeros.txt": b"0" * 5_000_000}))
    assert archive.stat().st_size < 50_000
    with pytest.raises(uploads.UploadError, match="UPLOAD_MAX_UNCOMPRESSED_BYTES"):
        uploads.zip_extract(
            path=archive, dest=tmp_path / "out", max_bytes=1_000_000, max_files=100
        )
    assert not (tmp_path / "out").exists()


def test_zip_with_a_lying_header_is_stopped_while_unpacking(tmp_path):
    archive = tmp_path / "liar.zip"
    archive.write_bytes(make_zip({"zeros.txt": b"0" * 2_000_000}))
    data = bytearray(archive.read_bytes())
    # Shrink the declared size in the central directory (its entry starts PK\1\2).
    central = data.rindex(b"PK\x01\x02")
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    with pytest.raises(uploads.UploadError):
        uploads.zip_extract(
            path=archive, dest=tmp_path / "out", max_bytes=1_000_000, max_files=100
        )
    assert not (tmp_path / "out").exists()


def test_bad_zip_in_an_upload_is_a_problem_not_a_crash(collection, staff, settings):
    settings.UPLOAD_MAX_UNCOMPRESSED_BYTES = 1000
    data = make_zip(cranfield_texts(20))
    task = start("documents", collection, staff, [SimpleUploadedFile("c.zip", data)])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.problems == [
        "c.zip: unpacks to more than the limit of 1000 bytes "
        "(UPLOAD_MAX_UNCOMPRESSED_BYTES)"
    ]
    assert Document.objects.count() == 0


def test_upload_larger_than_the_limit_keeps_nothing(collection, staff, settings):
    settings.UPLOAD_MAX_BYTES = 10_000
    with pytest.raises(uploads.UploadError, match="UPLOAD_MAX_BYTES"):
        start("topics", collection, staff, [upload(CRANFIELD / "topics.trec")])
    assert TaskRecord.objects.count() == 0
    assert list((Path(settings.DATA_DIR) / "uploads").glob("*/*")) == []


def test_gzip_bomb_is_refused_by_its_unpacked_size(loaded, staff, settings):
    settings.UPLOAD_MAX_UNCOMPRESSED_BYTES = 100_000
    line = (CRANFIELD / "qrels.txt").read_text().splitlines()[0] + "\n"
    bomb = gzip.compress(line.encode() * 200_000)
    assert len(bomb) < 50_000
    task = start(
        "qrels", loaded, staff, [SimpleUploadedFile("q.txt.gz", bomb)], name="q"
    )
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.problems == [
        "q.txt.gz: unpacks to more than the limit of 100000 bytes "
        "(UPLOAD_MAX_UNCOMPRESSED_BYTES)"
    ]


RAG_NUGGETS = TEST_DATA / "public" / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"


def test_nugget_bank_upload_checks_then_imports_with_the_bank_service(
    collection, staff
):
    from nuggets_app.importers.nuggets import parse_nuggets
    from nuggets_app.models import Nugget, NuggetBank

    records = list(parse_nuggets(RAG_NUGGETS))
    # Without new topics allowed, every qid is an unknown topic, line by line.
    task = start("nuggets", collection, staff, [upload(RAG_NUGGETS)], fmt="auto")
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.problems[0].startswith("rag25-dev-nuggets.jsonl:1: unknown topic")
    assert NuggetBank.objects.count() == 0

    task = start(
        "nuggets", collection, staff, [upload(RAG_NUGGETS)], create_topics=True
    )
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED, task.problems
    assert task.summary["nuggets"] == len(records)
    assert task.summary["new topics"] == len({r.qid for r in records})
    assert Nugget.objects.count() == 0
    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")
    assert task.status == TaskRecord.Status.DONE, task.error
    bank = NuggetBank.objects.get(collection=collection)
    assert bank.name == "rag25-dev-nuggets.jsonl"
    assert Nugget.objects.filter(bank=bank).count() == len(records)


def test_problems_found_across_lines_are_listed_in_line_order(loaded, staff, tmp_path):
    lines = gzip.decompress(RUNS[0].read_bytes()).decode().splitlines()
    cols = lines[0].split()
    lines[0] = " ".join([*cols[:2], "no-such-doc", *cols[3:]])
    cols = lines[2].split()
    lines[2] = " ".join([*cols[:4], "high", *cols[5:]])
    path = tmp_path / "late.run"
    path.write_text("\n".join(lines) + "\n")
    task = run_phase(start("runs", loaded, staff, [upload(path)]), "check")
    assert [line.split(": ")[0] for line in task.problems] == [
        "late.run:1",
        "late.run:3",
    ]


def test_a_zip_names_every_member_that_climbs_out(collection, staff):
    data = make_zip({"fine.txt": b"fine", "../a.txt": b"x", "../../b.txt": b"y"})
    task = start("documents", collection, staff, [SimpleUploadedFile("two.zip", data)])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.problems == [
        "two.zip: member '../a.txt' climbs out of the folder with '..'",
        "two.zip: member '../../b.txt' climbs out of the folder with '..'",
    ]


def test_a_zip_check_counts_the_bytes_it_read(collection, staff):
    texts = cranfield_texts(6)
    data = make_zip(texts)
    task = start("documents", collection, staff, [SimpleUploadedFile("six.zip", data)])
    task = run_phase(task, "check")
    assert task.summary["documents"] == 6
    assert task.summary["bytes read"] == sum(len(text) for text in texts.values())


def test_a_refused_upload_keeps_the_duration_of_its_check(collection, staff):
    data = make_zip({"../a.txt": b"x"})
    task = start("documents", collection, staff, [SimpleUploadedFile("r.zip", data)])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.finished_at is not None
    TaskRecord.objects.filter(pk=task.pk).update(
        started_at=task.started_at - timedelta(hours=1),
        finished_at=task.started_at - timedelta(hours=1) + timedelta(seconds=2),
    )
    task.refresh_from_db()
    assert task.duration == pytest.approx(2.0)


def test_a_checked_upload_waits_for_confirmation_then_expires(
    collection, staff, settings
):
    settings.UPLOAD_CONFIRM_HOURS = 24
    task = start("topics", collection, staff, [upload(CRANFIELD / "topics.trec")])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED
    assert task.finished_at is not None  # the clock stops while it waits
    assert task_status_text(task=task).startswith("awaits confirmation (until ")
    assert staff_tasks.uploads_expire() == 0
    TaskRecord.objects.filter(pk=task.pk).update(
        finished_at=timezone.now() - timedelta(hours=25)
    )
    with pytest.raises(staff_tasks.TaskStateError):
        staff_tasks.upload_task_confirm(task=task)
    task.refresh_from_db()
    assert task.status == TaskRecord.Status.CANCELLED
    assert task.error.startswith("expired: not confirmed within 24 hours")
    assert not uploads.upload_dir(task).exists()


def test_a_run_naming_unknown_documents_can_skip_them_from_the_page(
    loaded, staff, tmp_path
):
    lines = gzip.decompress(RUNS[0].read_bytes()).decode().splitlines()
    cols = lines[1].split()
    lines[1] = " ".join([*cols[:2], "no-such-doc", *cols[3:]])
    path = tmp_path / "unknown.run"
    path.write_text("\n".join(lines) + "\n")
    refused = run_phase(start("runs", loaded, staff, [upload(path)]), "check")
    assert refused.status == TaskRecord.Status.REFUSED
    assert "unknown.run:2: unknown document" in refused.problems[0]

    task = start("runs", loaded, staff, [upload(path)], skip_unknown_documents=True)
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED, task.problems
    assert task.summary["files"][0]["lines skipped"] == 1
    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")
    assert task.status == TaskRecord.Status.DONE, task.error
    assert "1 lines skipped" in task.result["lines"][0]
    assert RunEntry.objects.count() == len(lines) - 1


def test_the_check_finds_judged_documents_whose_text_would_change(
    shared_data, assessor, staff, tmp_path
):
    from tests.integration.worlds.cranfield_pool import cranfield_world

    world = cranfield_world(shared_data, assessor, nuggets_per_topic=10)
    noted = set(
        Nugget.objects.filter(topic__collection=world.collection).values_list(
            "document__docno", flat=True
        )
    )
    path = tmp_path / "docs.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for doc in world.collection.documents.order_by("pk"):
            text = f"Revised. {doc.text}" if doc.docno in noted else doc.text
            out.write(json.dumps({"docno": doc.docno, "text": text}) + "\n")

    task = start("documents", world.collection, staff, [upload(path)])
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.REFUSED
    assert task.summary["judged, text changes"] == len(noted)
    assert len(task.problems) == len(noted)
    assert "carries judgments or nuggets and its text would change" in task.problems[0]
    assert "re-anchor their nuggets" in task.problems[0]

    task = start(
        "documents", world.collection, staff, [upload(path)], changed_text="reanchor"
    )
    task = run_phase(task, "check")
    assert task.status == TaskRecord.Status.CHECKED, task.problems
    staff_tasks.upload_task_confirm(task=task)
    task = run_phase(task, "import")
    assert task.status == TaskRecord.Status.DONE, task.error
    assert "nuggets re-anchored" in task.result["lines"][0]
    assert all(
        n.document.text[n.start : n.end] == n.span_text
        for n in Nugget.objects.select_related("document")
    )
