"""nugget_bank_import on real nugget files: counts, offsets, provenance, all or nothing.

Counts are the data READMEs'. The TS source spans come from the assessors' matches
placed in the pseudo-documents (``doc_matches.jsonl.gz``).
"""

import gzip
import json
from collections import Counter

import pytest

from nuggets_app.collection.services.imports import collection_import, topics_import
from nuggets_app.collection.services.nugget_banks import (
    nugget_bank_delete,
    nugget_bank_import,
)
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.inference.selectors import job_nugget_specs
from nuggets_app.inference.services.exports import passages_export
from nuggets_app.models import Collection, MatchJob, Nugget, NuggetBank, Topic
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def ts(shared_data, tmp_path):
    """The TS pseudo-documents of the first placed matches, and those matches as the
    project's JSONL (nugget text from nuggets.jsonl, offsets from doc_matches)."""
    folder = shared_data / "trec-ts-nuggets"
    texts = {
        (n["qid"], n["nugget_id"]): n["text"]
        for n in map(json.loads, (folder / "nuggets.jsonl").open())
    }
    matches = []
    with gzip.open(folder / "doc_matches.jsonl.gz", "rt") as rows:
        for row in map(json.loads, rows):
            known = (row["qid"], row["nugget_id"]) in texts
            if row["start"] is not None and known and row["qid"] == "TS14.25":
                matches.append(row)
            if len(matches) == 40:
                break
    docnos = {m["docno"] for m in matches}
    docs = tmp_path / "docs.jsonl"
    with gzip.open(folder / "docs.jsonl.gz", "rt") as rows, docs.open("w") as out:
        for line in rows:
            if json.loads(line)["docno"] in docnos:
                out.write(line)
    collection_import(path=docs, name="ts")
    topics_import(path=folder / "topics.jsonl", collection="ts")
    bank = tmp_path / "ts-matches.jsonl"
    with bank.open("w") as out:
        for m in matches:
            record = {
                "qid": m["qid"],
                "id": m["nugget_id"],
                "text": texts[(m["qid"], m["nugget_id"])],
                "grade": m["importance"],
                "docno": m["docno"],
                "start": m["start"],
                "end": m["end"],
            }
            out.write(json.dumps(record) + "\n")
    return bank, matches


def test_rag25_nuggets_become_a_bank_with_created_topics(shared_data):
    path = shared_data / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    result = nugget_bank_import(path=path, collection="rag25", create_topics=True)
    bank = result.bank
    assert (result.nuggets, result.topics, result.topics_created) == (1255, 22, 22)
    assert Counter(bank.nuggets.values_list("grade", flat=True)) == {2: 925, 1: 330}
    assert not bank.nuggets.filter(assessor__isnull=False).exists()
    assert not bank.nuggets.filter(document__isnull=False).exists()
    nugget = bank.nuggets.select_related("topic", "bank").first()
    assert nugget.provenance() == "imported from rag25-dev-nuggets.jsonl"
    assert nugget.aspect in [a["id"] for a in nugget.topic.aspects]


def test_trec_qa_key_and_trec_ts_nuggets_import_with_readme_counts(shared_data):
    qa = shared_data / "trec-qa-nuggets" / "original" / "trec12answers_definition"
    result = nugget_bank_import(path=qa, collection="qa", create_topics=True)
    assert (result.nuggets, result.topics, result.format) == (417, 50, "trec-qa")
    assert Topic.objects.get(collection__name="qa", qid="1901").title == (
        "Who is Aaron Copland?"
    )
    f.CollectionFactory(name="ts")
    for year, count in ((2013, 1340), (2014, 1394)):
        path = (
            shared_data / "trec-ts-nuggets" / "original" / str(year) / "nuggets.tsv.gz"
        )
        result = nugget_bank_import(
            path=path, collection="ts", name=f"ts{year}", create_topics=True
        )
        assert (result.nuggets, result.format) == (count, "trec-ts")
    assert Nugget.objects.filter(bank__name="ts2014", grade=3).count() == 320


def test_source_spans_are_checked_and_kept_against_the_document_text(ts):
    path, matches = ts
    result = nugget_bank_import(path=path, collection="ts")
    assert result.nuggets == result.with_source == len(matches)
    nuggets = result.bank.nuggets.select_related("document").order_by("pk")
    for nugget, match in zip(nuggets, matches, strict=True):
        assert nugget.document.docno == match["docno"]
        assert (nugget.start, nugget.end) == (match["start"], match["end"])
        assert nugget.span_text == nugget.document.text[match["start"] : match["end"]]
        assert nugget.source_id == match["nugget_id"]


def _with_line(path, line_no, record, tmp_path):
    lines = path.read_text().splitlines()
    lines.insert(line_no - 1, json.dumps(record))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    return bad


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"end": 10**6}, "offsets outside the document text"),
        ({"span": "not the text there"}, "span differs"),
        ({"docno": "no-such-doc"}, "unknown document"),
        ({"qid": "TS99.1"}, "unknown topic"),
        ({"text": ""}, "empty nugget text"),
    ],
)
def test_a_bad_line_saves_nothing(ts, tmp_path, change, problem):
    path, _matches = ts
    first = json.loads(path.read_text().splitlines()[0])
    bad = _with_line(path, 5, {**first, **change}, tmp_path)
    with pytest.raises(ImportFormatError) as error:
        nugget_bank_import(path=bad, collection="ts")
    assert str(error.value).startswith(f"{bad}:5: {problem}")
    assert not NuggetBank.objects.exists()
    assert not Nugget.objects.exists()


def test_reimport_replaces_and_delete_removes_the_bank(ts):
    path, matches = ts
    nugget_bank_import(path=path, collection="ts", name="gold")
    again = nugget_bank_import(path=path, collection="ts", name="gold")
    assert again.replaced
    assert Nugget.objects.count() == len(matches)
    assert nugget_bank_delete(bank=again.bank) == len(matches)
    assert not Nugget.objects.exists()


def test_matching_jobs_read_bank_nuggets_like_assessor_nuggets(ts, assessor):
    path, matches = ts
    bank = nugget_bank_import(path=path, collection="ts").bank
    topic = Topic.objects.get(collection__name="ts", qid="TS14.25")
    own = f.NuggetFactory(
        topic=topic, assessor=assessor, document=bank.nuggets.first().document
    )
    for nugget_filter, expected in (
        ({}, len(matches) + 1),
        ({"banks": [bank.pk]}, len(matches)),
        ({"assessors": [assessor.pk]}, 1),
        ({"banks": [bank.pk], "assessors": [assessor.pk]}, len(matches) + 1),
    ):
        job = MatchJob.objects.create(
            collection=topic.collection,
            source="collection",
            nugget_filter=nugget_filter,
        )
        specs = job_nugget_specs(job, topic.pk)
        assert len(specs) == expected
        if nugget_filter.get("assessors") or not nugget_filter:
            assert str(own.pk) in {s.id for s in specs}


def test_only_nuggets_with_a_source_span_export_as_passages(ts, shared_data):
    path, matches = ts
    nugget_bank_import(path=path, collection="ts", name="spans")
    rag = shared_data / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    nugget_bank_import(path=rag, collection="ts", name="keys", create_topics=True)
    lines = passages_export(collection=Collection.objects.get(name="ts")).lines
    expected = {
        f"{m['qid']} {m['docno']} {m['start']} {m['end'] - m['start']}" for m in matches
    }
    assert set(lines) == expected
