"""A nugget bank leaves the product and comes back: the demo judged by the simulated
assessor, its bank written by ``export_nuggets``, loaded by ``import_nuggets`` into an
emptied database under another collection name, written again: the same bytes, every
offset pointing at the same text; and the TREC formats read back by their readers."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.imports import collection_import, topics_import
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.importers.nuggets import parse_nuggets
from nuggets_app.models import Collection, Document, Nugget
from tests.integration.releases.world import database_empty

pytestmark = pytest.mark.django_db


def _export(tmp_path, name, *args):
    path = tmp_path / name
    call_command(
        "export_nuggets", *args, "-o", str(path), stdout=io.StringIO(),
        stderr=io.StringIO(),
    )  # fmt: skip
    return path


def test_a_bank_round_trip_keeps_every_field_and_offset(simulated_demo, tmp_path):
    first = _export(tmp_path, "bank.jsonl", "--collection", "demo")
    lines = [json.loads(x) for x in first.read_text().splitlines()]
    made = Nugget.objects.filter(topic__collection__name="demo")
    assert len(lines) == made.count() > 0
    line = lines[0]
    assert list(line) == [
        "qid", "id", "text", "keywords", "grade", "aspect", "docno", "start",
        "end", "span", "assessor", "created", "changed", "judgment",
    ]  # fmt: skip
    # Every nugget of the simulation sits in a document its assessor judged relevant.
    assert {x["assessor"] for x in lines} == {"simulated-assessor"}
    assert all(x["judgment"] is not None and x["judgment"] >= 1 for x in lines)
    texts = dict(Document.objects.values_list("docno", "text"))
    for x in lines:
        assert texts[x["docno"]][x["start"] : x["end"]] == x["span"]
    qids = [int(x["qid"]) for x in lines]
    assert qids == sorted(qids)

    database_empty()
    assert not Collection.objects.exists()
    collection_import(path=DATA_DIR / "docs.jsonl", name="demo-copy")
    topics_import(path=DATA_DIR / "topics.jsonl", collection="demo-copy")
    call_command(
        "import_nuggets", str(first), "--collection", "demo-copy",
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    second = _export(tmp_path, "again.jsonl", "--collection", "demo-copy")
    assert second.read_bytes() == first.read_bytes()
    copied = Nugget.objects.filter(topic__collection__name="demo-copy")
    for nugget in copied.select_related("document"):
        assert nugget.document.text[nugget.start : nugget.end] == nugget.span_text


def test_trec_formats_read_back_with_their_importance(simulated_demo, tmp_path):
    bank = [
        json.loads(x)
        for x in _export(tmp_path, "b.jsonl", "--collection", "demo")
        .read_text()
        .splitlines()
    ]
    for fmt in ("rag", "trec-qa"):
        path = _export(tmp_path, f"b.{fmt}", "--collection", "demo", "--format", fmt)
        records = list(parse_nuggets(path, "auto"))
        assert [(r.qid, r.text) for r in records] == [
            (x["qid"], x["text"]) for x in bank
        ]
        assert [r.grade for r in records] == [
            2 if (x["grade"] or 0) >= 2 else 1 for x in bank
        ]
    with pytest.raises(CommandError, match="no assessor named 'nobody'"):
        _export(tmp_path, "n.jsonl", "--collection", "demo", "--assessor", "nobody")
    by_sample = _export(
        tmp_path, "s.jsonl", "--collection", "demo", "--sample",
        simulated_demo.sample.name,
    )  # fmt: skip
    assert by_sample.read_text() == (tmp_path / "b.jsonl").read_text()


def test_staff_download_the_bank_and_assessors_are_refused(
    simulated_demo, client, staff, assessor, tmp_path
):
    staff_client = client
    client.force_login(staff)
    command = _export(tmp_path, "c.jsonl", "--collection", "demo").read_text()
    page = staff_client.get("/collections/demo/")
    assert b'id="nuggets-jsonl"' in page.content
    got = staff_client.get("/collections/demo/nuggets?format=jsonl")
    assert got.status_code == 200
    assert got["Content-Disposition"] == 'attachment; filename="demo.nuggets.jsonl"'
    assert got.content.decode() == command
    sample = simulated_demo.sample
    by_sample = staff_client.get(f"/samples/{sample.pk}/nuggets?format=trec-qa")
    assert by_sample.content.decode().startswith("Qid 1: ")
    bad = staff_client.get("/collections/demo/nuggets?format=xml")
    assert bad.status_code == 400
    assert "Unknown format 'xml'" in bad.content.decode()
    client.force_login(assessor)
    assert client.get("/collections/demo/nuggets").status_code == 403
