"""Subtopic qrels of a real Cranfield job whose nuggets are filed under aspects: human
coverage from judged relevant documents, inferred coverage from matched nuggets,
aspects no document covers, the file read back, and evaluate's diversity measures
equal to ir_measures on the exported file; the file imported back (import_qrels --kind
subtopics) stores the same lines, a malformed line saves nothing, and evaluate from the
stored qrels equals ir_measures too."""

from __future__ import annotations

import io

import ir_measures
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from nuggets_app.collection.services.imports import runs_import
from nuggets_app.evaluation.selectors import stored_qrels, stored_subtopic_qrels
from nuggets_app.importers.qrels import parse_qrels_text, subtopic_qrels_read
from nuggets_app.inference.services.diversity import subtopics_export
from nuggets_app.ir.diversity import subtopic_qrels_lines
from nuggets_app.models import Judgment, MatchResult, Nugget, Qrels
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db
QIDS = ("3", "4")


MEASURES = [
    ir_measures.alpha_nDCG @ 10,
    ir_measures.ERR_IA @ 10,
    ir_measures.StRecall @ 10,
]


def _values(out: io.StringIO) -> dict[tuple[str, str], float]:
    """``evaluate``'s ``measure<TAB>topic<TAB>value`` lines."""
    return {
        (m, t): float(v)
        for m, t, v in (line.split("\t") for line in out.getvalue().splitlines())
    }


def _reference(qrels_path, run_path) -> tuple[list, dict]:
    """ir_measures' own diversity values for the same files: per topic, and means."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return (
        list(ir_measures.iter_calc(MEASURES, qrels, run)),
        ir_measures.calc_aggregate(MEASURES, qrels, run),
    )


def _export_subtopics(world, job, tmp_path):
    """``export_qrels --kind subtopics`` of the job, to a file of ``tmp_path``."""
    path = tmp_path / "subtopics.qrels"
    call_command(
        "export_qrels",
        collection=world.collection.name,
        kind="subtopics",
        job=job.pk,
        output=path,
        stderr=io.StringIO(),
    )
    return path


def _import_subtopics(world, path) -> None:
    """``import_qrels --kind subtopics`` of ``path`` as the qrels named "div"."""
    call_command(
        "import_qrels",
        str(path),
        collection=world.collection.name,
        name="div",
        kind="subtopics",
        stdout=io.StringIO(),
    )


def _stored_div() -> list[tuple]:
    return sorted(
        Qrels.objects.get(name="div").entries.values_list(
            "topic_id", "subtopic", "document_id", "relevance"
        )
    )


def _assert_like_ir_measures(got, qrels_path, run_path, nothing_else=False) -> None:
    """``got`` (``_values``) equals ir_measures' values per topic and means; with
    ``nothing_else``, it holds no other value."""
    per_topic, means = _reference(qrels_path, run_path)
    if nothing_else:
        assert {(str(m.measure), m.query_id) for m in per_topic} | {
            (str(m), "all") for m in MEASURES
        } == set(got)
    for m in per_topic:
        assert got[(str(m.measure), m.query_id)] == pytest.approx(m.value, abs=1e-4)
    for m, v in means.items():
        assert got[(str(m), "all")] == pytest.approx(v, abs=1e-4)


@pytest.fixture
def world(shared_data, assessor):
    world = cranfield_world(shared_data, assessor, qids=QIDS, per_topic=20, judge=8)
    for topic in world.topics:
        topic.aspects = [{"id": f"s{i}", "text": f"aspect {i}"} for i in (1, 2, 3)]
        topic.save(update_fields=["aspects"])
        nuggets = Nugget.objects.filter(topic=topic).order_by("pk")
        for i, nugget in enumerate(nuggets):
            nugget.aspect = "s1" if i % 2 == 0 else "s2"
            nugget.save(update_fields=["aspect"])
    return world


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=20)


def test_human_and_inferred_coverage_with_provenance(world, job):
    judged = {
        (j.topic.qid, j.document.docno): j.relevance
        for j in Judgment.objects.filter(topic__in=world.topics).select_related(
            "topic", "document"
        )
    }
    nuggets = {
        n.pk: n
        for n in Nugget.objects.filter(topic__in=world.topics).select_related(
            "document", "topic"
        )
    }
    best = {
        (q, d): s
        for q, d, s in MatchResult.objects.filter(job=job).values_list(
            "topic__qid", "document__docno", "score"
        )
    }
    # The threshold: the best score of an unjudged document, so that one is inferred.
    threshold = max(s for k, s in best.items() if k not in judged)
    assert threshold > 0
    export = subtopics_export(collection=world.collection, job=job, threshold=threshold)
    lines = export.provenance["lines"]
    sources = {rec["source"] for rec in lines}
    assert sources == {"person", "matcher"}
    for rec in lines:
        key = (rec["qid"], rec["docno"])
        for pk in rec["nuggets"]:
            assert nuggets[pk].aspect == rec["subtopic"]
            assert nuggets[pk].topic.qid == rec["qid"]
        if rec["source"] == "person":
            # A judged relevant document covers its own nuggets' aspects.
            assert judged[key] >= 1
            assert rec["rel"] == judged[key]
            assert all(
                nuggets[pk].document.docno == rec["docno"] for pk in rec["nuggets"]
            )
        else:
            assert key not in judged
            assert best[key] >= threshold
    # Every judged relevant source document of an aspect-tagged nugget is listed.
    for n in nuggets.values():
        if judged.get((n.topic.qid, n.document.docno), 0) >= 1:
            assert (
                f"{n.topic.qid} {n.aspect} {n.document.docno} "
                in "\n".join(export.lines) + " "
            )
    assert export.provenance["aspects_without_documents"] == {"3": ["s3"], "4": ["s3"]}
    human_only = subtopics_export(collection=world.collection)
    assert {r["source"] for r in human_only.provenance["lines"]} == {"person"}


def test_file_reads_back_and_evaluate_matches_ir_measures(world, job, tmp_path):
    path = _export_subtopics(world, job, tmp_path)
    assert (tmp_path / "subtopics.qrels.provenance.json").exists()
    parsed = subtopic_qrels_read(
        parse_qrels_text(path.read_text().splitlines(), "subtopics")
    )
    export = subtopics_export(collection=world.collection, job=job)
    assert sorted(
        f"{q} {s} {d} {g}"
        for q, subs in parsed.items()
        for s, docs in subs.items()
        for d, g in docs.items()
    ) == sorted(export.lines)
    # A run over the pool in docno order, scored by evaluate and by ir_measures.
    run_path = _pool_run(world, tmp_path / "pool.run")
    out = io.StringIO()
    call_command(
        "evaluate", str(run_path), subtopic_qrels=str(path), depth=10, stdout=out
    )
    got = _values(out)
    _assert_like_ir_measures(got, path, run_path)


def _pool_run(world, path):
    """A run over the pool in docno order."""
    rows = []
    for topic in world.topics:
        docs = sorted(world.pooled[topic.qid], key=lambda d: d.docno)
        for rank, doc in enumerate(docs):
            rows.append(f"{topic.qid} Q0 {doc.docno} {rank + 1} {100 - rank} pool")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_exported_subtopic_qrels_round_trip_through_the_importer(world, job, tmp_path):
    path = _export_subtopics(world, job, tmp_path)
    exported = path.read_text().splitlines()
    assert len({line.split()[1] for line in exported}) > 1
    _import_subtopics(world, path)
    qrels = Qrels.objects.get(collection=world.collection, name="div")
    assert qrels.kind == Qrels.Kind.SUBTOPICS
    assert qrels.entries.count() == len(exported)
    # export -> import -> export: the stored subtopic qrels write the same lines.
    stored = stored_subtopic_qrels(qrels)
    assert subtopic_qrels_lines(stored) == exported
    again = subtopics_export(collection=world.collection, job=job)
    assert again.lines == exported
    # Read as ad hoc qrels, a document has its best grade over the subtopics.
    best: dict[str, dict[str, int]] = {}
    for qid, subtopics in subtopic_qrels_read(
        parse_qrels_text(exported, "subtopics")
    ).items():
        for docs in subtopics.values():
            for docno, grade in docs.items():
                topic = best.setdefault(qid, {})
                topic[docno] = max(grade, topic.get(docno, grade))
    assert stored_qrels(qrels) == best


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("3 0 {docno} 1", "ambiguous subtopic '0'"),
        ("3 s1 {docno}", "wrong number of columns for subtopics"),
        ("3 s9 no-such-document 1", "no-such-document"),
    ],
)
def test_a_malformed_subtopic_line_saves_nothing(world, job, tmp_path, bad, problem):
    path = _export_subtopics(world, job, tmp_path)
    good = path.read_text().splitlines()
    name = world.collection.name
    _import_subtopics(world, path)
    before = _stored_div()
    # Every good line changed to grade 0, then the bad line last: nothing may land.
    docno = good[0].split()[2]
    edited = [" ".join([*line.split()[:3], "0"]) for line in good]
    bad_path = tmp_path / "bad.qrels"
    bad_path.write_text("\n".join([*edited, bad.format(docno=docno)]) + "\n")
    line = len(good) + 1
    for target in ("div", "new"):
        with pytest.raises(CommandError, match=rf"{bad_path}:{line}: .*{problem}"):
            call_command(
                "import_qrels",
                str(bad_path),
                collection=name,
                name=target,
                format="subtopics",
                stdout=io.StringIO(),
            )
    assert not Qrels.objects.filter(name="new").exists()
    after = _stored_div()
    assert after == before


def test_evaluate_from_stored_subtopic_qrels_equals_ir_measures(world, job, tmp_path):
    path = _export_subtopics(world, job, tmp_path)
    _import_subtopics(world, path)
    run_path = _pool_run(world, tmp_path / "pool.run")
    runs_import(paths=[run_path], collection=world.collection)
    out = io.StringIO()
    call_command(
        "evaluate",
        collection=world.collection.name,
        qrels_name="div",
        run_names=["pool"],
        depth=10,
        stdout=out,
    )
    got = _values(out)
    _assert_like_ir_measures(got, path, run_path, nothing_else=True)


def test_topic_page_shows_aspect_coverage_and_uncovered_aspects(
    staff_client, world, job
):
    from django.urls import reverse

    from nuggets_app.inference.services.diversity import topic_aspects

    topic = world.topics[0]
    view = topic_aspects(job=job, topic=topic)
    assert [a.id for a in view.aspects] == ["s1", "s2", "s3"]
    assert view.without_nuggets == ["s3"]
    export = subtopics_export(collection=world.collection, job=job, topics=[topic])
    person = {r["docno"] for r in export.provenance["lines"] if r["source"] == "person"}
    assert {d["docno"] for d in view.documents if d["source"] == "judged"} == person
    page = staff_client.get(reverse("job-topic", args=[job.pk, topic.qid])).text
    assert '<section class="card" id="aspects">' in page
    assert "No nugget covers yet: <strong>s3</strong>" in page
    first = view.documents[0]
    assert f'<th scope="row">{first["docno"]}</th><td>judged</td>' in page
