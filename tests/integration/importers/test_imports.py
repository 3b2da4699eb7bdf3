"""Import services and commands against the real database (PostgreSQL in the suite).

Expected counts come from each collection's README and stats.json; run line counts are
taken from the files themselves with gzip, independently of the parsers.
"""

import gzip
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Avg, Count

from nuggets_app.collection.services.imports import (
    collection_import,
    qrels_import,
    runs_import,
    topics_import,
)
from nuggets_app.errors import DomainError
from nuggets_app.importers import ImportFormatError
from nuggets_app.models import (
    Collection,
    Document,
    Nugget,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Topic,
)

ALL_TABLES = (Collection, Document, Topic, Run, RunEntry, Qrels, QrelsEntry)


def _counts():
    return {model.__name__: model.objects.count() for model in ALL_TABLES}


def _data_lines(path):
    with gzip.open(path, "rb") as handle:
        return sum(1 for line in handle if line.strip())


@pytest.fixture
def cranfield(db, shared_data):
    folder = shared_data / "cranfield"
    collection_import(path=folder / "docs.trec.gz", name="cranfield")
    topics_import(path=folder / "topics.trec", collection="cranfield")
    return folder


@pytest.mark.slow
def test_cranfield_imports_with_the_readme_counts(cranfield):
    stats = json.loads((cranfield / "stats.json").read_text())
    collection = Collection.objects.get(name="cranfield")
    assert collection.documents.count() == stats["docs"] == 1400
    assert collection.topics.count() == stats["topics"] == 225
    mean_words = collection.documents.aggregate(m=Avg("length_words"))["m"]
    assert round(mean_words, 1) == stats["doc_words_mean_text_only"]
    assert collection.documents.filter(text="").count() == stats["empty_text_docs"]

    again = collection_import(path=cranfield / "docs.jsonl.gz", name="cranfield")
    assert (again.records, again.created, again.updated) == (1400, 0, 1400)
    assert collection.documents.count() == 1400

    summary = qrels_import(
        path=cranfield / "qrels.txt", collection=collection, name="cran"
    )
    assert summary.records == stats["qrels_lines"] == 1837
    grades = dict(
        QrelsEntry.objects.values_list("relevance").annotate(n=Count("id")).order_by()
    )
    assert {str(g): n for g, n in grades.items()} == stats["grades"]

    paths = sorted((cranfield / "runs").glob("*.run.gz"))
    assert len(paths) == 36
    summaries = runs_import(paths=paths, collection=collection)
    assert Run.objects.filter(collection=collection).count() == 36
    for path, summary in zip(paths, summaries, strict=True):
        assert summary.records == _data_lines(path)
        assert summary.name == path.name.removesuffix(".run.gz")
    assert RunEntry.objects.count() == sum(_data_lines(p) for p in paths)


@pytest.mark.slow
def test_npl_imports_with_the_readme_counts(db, shared_data):
    folder = shared_data / "npl-vaswani"
    stats = json.loads((folder / "stats.json").read_text())
    collection_import(path=folder / "docs.jsonl.gz", name="npl")
    topics_import(path=folder / "topics.trec", collection="npl")
    qrels_import(path=folder / "qrels.txt", collection="npl", name="npl")
    assert (
        Document.objects.filter(collection__name="npl").count()
        == stats["docs"]
        == 11429
    )
    assert Topic.objects.filter(collection__name="npl").count() == stats["topics"] == 93
    assert QrelsEntry.objects.count() == stats["qrels_lines"]


def test_runs_are_ranked_in_trec_eval_order_and_reimport_is_idempotent(cranfield):
    path = cranfield / "runs" / "kidus-hw1-bm25.run.gz"
    runs_import(paths=[path], collection="cranfield")
    first = set(
        RunEntry.objects.values_list("topic__qid", "document__docno", "rank", "score")
    )
    runs_import(paths=[path], collection="cranfield")
    second = set(
        RunEntry.objects.values_list("topic__qid", "document__docno", "rank", "score")
    )
    assert first == second
    assert Run.objects.count() == 1
    # The file's own first lines for topic 1 (README: ranks renumbered 1..k in order).
    top = RunEntry.objects.filter(topic__qid="1").order_by("rank")[:3]
    assert [(e.document.docno, e.rank, e.score) for e in top] == [
        ("184", 1, 24.280813),
        ("486", 2, 21.978162),
        ("13", 3, 21.341216),
    ]


def test_reimporting_documents_keeps_ids_and_text(cranfield):
    before = dict(Document.objects.values_list("docno", "id"))
    texts = dict(Document.objects.values_list("docno", "text"))
    collection_import(path=cranfield / "docs.trec.gz", name="cranfield")
    assert dict(Document.objects.values_list("docno", "id")) == before
    assert dict(Document.objects.values_list("docno", "text")) == texts


def test_new_and_replaced_documents_are_counted_across_batches(db, settings, tmp_path):
    settings.IMPORT_BATCH_SIZE = 3
    first = tmp_path / "first.jsonl"
    first.write_text(
        "".join(
            json.dumps({"docno": f"D{i}", "text": f"t{i}"}) + "\n" for i in range(5)
        )
    )
    summary = collection_import(path=first, name="counted")
    assert (summary.records, summary.created, summary.updated) == (5, 5, 0)
    # D3 and D4 are there already, D5-D9 are new, in batches of three.
    second = tmp_path / "second.jsonl"
    second.write_text(
        "".join(
            json.dumps({"docno": f"D{i}", "text": f"new {i}"}) + "\n"
            for i in range(3, 10)
        )
    )
    summary = collection_import(path=second, name="counted")
    assert (summary.records, summary.created, summary.updated) == (7, 5, 2)
    assert Document.objects.filter(collection__name="counted").count() == 10
    # An empty collection that already exists counts every document as new.
    Collection.objects.create(name="empty")
    summary = collection_import(path=second, name="empty")
    assert (summary.created, summary.updated) == (7, 0)


def _with_bad_last_line(source, target, bad: bytes, gz=True):
    opener = gzip.open if gz else open
    with opener(source, "rb") as handle:
        data = handle.read()
    target.write_bytes(data + bad)
    return target, data.count(b"\n") + 1


def test_a_bad_last_line_saves_nothing_for_each_importer(cranfield, tmp_path):
    before = _counts()
    cases = [
        (
            lambda p: collection_import(path=p, name="cranfield"),
            _with_bad_last_line(
                cranfield / "docs.jsonl.gz", tmp_path / "d.jsonl", b"{bad\n"
            ),
        ),
        (
            lambda p: collection_import(path=p, name="fresh"),
            _with_bad_last_line(
                cranfield / "docs.trec.gz", tmp_path / "d.trec", b"<DOC>\n"
            ),
        ),
        (
            lambda p: runs_import(paths=[p], collection="cranfield"),
            _with_bad_last_line(
                cranfield / "runs" / "kidus-hw1-bm25.run.gz",
                tmp_path / "r.run",
                b"1 Q0 184 9 nan kidus-hw1-bm25\n",
            ),
        ),
        (
            lambda p: qrels_import(path=p, collection="cranfield", name="q"),
            _with_bad_last_line(
                cranfield / "qrels.txt", tmp_path / "q.txt", b"1 0 1 x\n", gz=False
            ),
        ),
        (
            lambda p: topics_import(path=p, collection="cranfield"),
            _with_bad_last_line(
                cranfield / "topics.trec",
                tmp_path / "t.trec",
                b"<top>\n<title> x\n</top>\n",
                gz=False,
            ),
        ),
    ]
    for load, (path, line) in cases:
        with pytest.raises(ImportFormatError) as caught:
            load(path)
        assert caught.value.line == line, str(caught.value)
        assert _counts() == before


def test_unknown_documents_and_topics_are_named_with_their_line(cranfield, tmp_path):
    path = tmp_path / "r.run"
    path.write_text("1 Q0 184 1 2.0 t\n1 Q0 no-such-doc 2 1.0 t\n")
    with pytest.raises(ImportFormatError, match=r"r\.run:2: unknown document"):
        runs_import(paths=[path], collection="cranfield")
    path.write_text("1 0 184 1\n999 0 184 1\n")
    with pytest.raises(ImportFormatError, match=r"r\.run:2: unknown topic"):
        qrels_import(path=path, collection="cranfield", name="q")
    assert not Run.objects.exists()
    assert not Qrels.objects.exists()


def test_max_errors_reports_several_problems_and_saves_nothing(cranfield, tmp_path):
    path = tmp_path / "r.run"
    path.write_text("1 Q0 184 1 x t\n1 Q0 486 2 1.0 t\n1 Q0 13 3 y t\n1 Q0 zz 4 1 t\n")
    with pytest.raises(CommandError) as caught:
        call_command("import_runs", str(path), collection="cranfield", max_errors=5)
    lines = str(caught.value).splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        f"{path}:1",
        f"{path}:3",
        f"{path}:4",
    ]
    assert not RunEntry.objects.exists()


def test_commands_import_and_report(cranfield, capsys):
    call_command(
        "import_qrels", str(cranfield / "qrels.txt"), collection="cranfield", name="c"
    )
    assert "1837 judgments" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no collection named 'nope'"):
        call_command("import_topics", str(cranfield / "topics.trec"), collection="nope")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_collection", str(cranfield / "missing.trec"), name="x")


def test_prels_keep_their_inclusion_probabilities(db, tmp_path):
    collection = Collection.objects.create(name="web")
    Topic.objects.create(collection=collection, qid="1", title="t")
    for docno in ("a", "b"):
        Document.objects.create(collection=collection, docno=docno, text=docno)
    path = tmp_path / "p.txt"
    path.write_text("1 a 1 0 1\n1 b 0 1 0.125\n")
    summary = qrels_import(path=path, collection=collection, name="p")
    assert summary.records == 2
    assert Qrels.objects.get(name="p").kind == "prels"
    assert sorted(
        QrelsEntry.objects.values_list("relevance", "method", "inclusion_prob")
    ) == [
        (0, 1, 0.125),
        (1, 0, 1.0),
    ]


# --- re-importing documents that carry judgments and nuggets ---------------------------
def _judged_world(shared_data, assessor):
    from tests.integration.worlds.cranfield_pool import cranfield_world

    world = cranfield_world(shared_data, assessor, nuggets_per_topic=10)
    nuggets = list(Nugget.objects.filter(topic__collection=world.collection))
    assert len(nuggets) >= 10
    return world, nuggets


def _reimport_file(tmp_path, collection, edit) -> str:
    """The collection's documents as JSONL, each text passed through ``edit``."""
    path = tmp_path / "docs.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for doc in collection.documents.order_by("pk"):
            row = {"docno": doc.docno, "title": doc.title, "text": edit(doc)}
            out.write(json.dumps(row) + "\n")
    return str(path)


def _revised_noted_documents(shared_data, assessor, tmp_path):
    """A judged world, its nuggets, and a re-import file in which each document
    holding a nugget starts with "Revised. "."""
    world, nuggets = _judged_world(shared_data, assessor)
    noted = {n.document_id for n in nuggets}
    path = _reimport_file(
        tmp_path,
        world.collection,
        lambda d: f"Revised. {d.text}" if d.pk in noted else d.text,
    )
    return world, nuggets, path


def _state(collection):
    texts = dict(collection.documents.values_list("docno", "text"))
    spans = set(Nugget.objects.values_list("pk", "start", "end"))
    return texts, spans


def _offsets_match():
    return all(
        n.document.text[n.start : n.end] == n.span_text
        for n in Nugget.objects.select_related("document")
    )


def test_a_reimport_that_changes_judged_text_is_refused(
    shared_data, assessor, tmp_path
):
    world, nuggets, path = _revised_noted_documents(shared_data, assessor, tmp_path)
    noted = {n.document_id for n in nuggets}
    before = _state(world.collection)
    with pytest.raises(CommandError) as error:
        call_command("import_collection", path, "--name", world.collection.name)
    assert f"{len(noted)} document(s) of 'cranfield-jobs'" in str(error.value)
    assert "--changed-text reanchor" in str(error.value)
    assert _state(world.collection) == before
    assert _offsets_match()
    # The unchanged file goes through: nothing judged changes.
    same = _reimport_file(tmp_path, world.collection, lambda d: d.text)
    summary = collection_import(path=same, name=world.collection.name)
    assert summary.updated == world.collection.documents.count()


def test_a_reimport_with_reanchor_moves_every_nugget_to_its_span(
    shared_data, assessor, tmp_path
):
    world, nuggets, path = _revised_noted_documents(shared_data, assessor, tmp_path)
    summary = collection_import(
        path=path, name=world.collection.name, changed_text="reanchor"
    )
    assert summary.reanchored == len(nuggets)
    assert "nuggets re-anchored" in summary.describe()
    assert _offsets_match()
    for nugget in nuggets:
        moved = Nugget.objects.get(pk=nugget.pk)
        assert moved.start == nugget.start + len("Revised. ")


def test_reanchor_refuses_when_a_span_text_is_gone(shared_data, assessor, tmp_path):
    world, nuggets = _judged_world(shared_data, assessor)
    victim = nuggets[0]
    path = _reimport_file(
        tmp_path,
        world.collection,
        lambda d: (
            d.text.replace(victim.span_text, "")
            if d.pk == victim.document_id
            else d.text
        ),
    )
    before = _state(world.collection)
    with pytest.raises(DomainError, match="cannot be re-anchored") as error:
        collection_import(
            path=path, name=world.collection.name, changed_text="reanchor"
        )
    assert f"nugget {victim.pk} of document {victim.document.docno}" in str(error.value)
    assert _state(world.collection) == before


def test_unknown_documents_of_a_run_can_be_skipped_and_are_counted(
    cranfield, tmp_path, capsys
):
    path = tmp_path / "r.run"
    path.write_text(
        "1 Q0 184 1 3.0 t\n1 Q0 no-such-doc 2 2.0 t\n1 Q0 486 3 1.0 t\n"
        "2 Q0 no-such-doc 1 1.0 t\n"
    )
    (summary,) = runs_import(
        paths=[path], collection="cranfield", skip_unknown_documents=True
    )
    assert (summary.records, summary.skipped, summary.skipped_documents) == (2, 2, 1)
    assert "2 lines skipped: their 1 documents are not in the collection" in (
        summary.describe()
    )
    # The kept documents keep the ranks they had beside the skipped one.
    assert sorted(RunEntry.objects.values_list("document__docno", "rank")) == [
        ("184", 1),
        ("486", 3),
    ]
    call_command(
        "import_runs", str(path), collection="cranfield", skip_unknown_documents=True
    )
    assert "2 lines skipped" in capsys.readouterr().out


def test_the_import_benchmark_compares_sizes_in_one_run(db):
    out = io.StringIO()
    call_command("bench_import", "--docs", "40", "80", stdout=out)
    text = out.getvalue()
    assert text.count("import into the database:") == 2
    assert "import rate at 80 over the rate at 40: " in text
    assert not Collection.objects.filter(name="bench-import").exists()
