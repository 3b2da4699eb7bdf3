"""Exports: formats, determinism, provenance, and round trips through import_qrels."""

import json

import pytest
from django.core.management import CommandError, call_command

from matcher import MatchOptions, TopicMatcher
from nuggets_app.collection.services.imports import qrels_import
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import (
    Export,
    passages_export,
    prels_export,
    qrels_export,
    scores_export,
)
from nuggets_app.inference.services.matching import job_nugget_specs
from nuggets_app.models import Judgment, Qrels, Sample, SampleDocument
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor)


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=10)


def _human(world) -> dict[tuple[str, str], int]:
    rows = Judgment.objects.filter(topic__collection=world.collection)
    return {(j.topic.qid, j.document.docno): j.relevance for j in rows}


def _imported(path, world, name, kind="auto") -> dict[tuple[str, str], tuple]:
    qrels_import(path=path, collection=world.collection, name=name, kind=kind)
    entries = Qrels.objects.get(name=name).entries.select_related("topic", "document")
    return {
        (e.topic.qid, e.document.docno): (e.relevance, e.method, e.inclusion_prob)
        for e in entries
    }


def test_human_qrels_round_trip_through_import_qrels(world, tmp_path):
    export = qrels_export(collection=world.collection, kind="human")
    path = tmp_path / "human.qrels"
    written = export.write(path)
    assert written == [path, tmp_path / "human.qrels.provenance.json"]
    lines = path.read_text().splitlines()
    assert len(lines) == 24  # 12 judgments on each of 2 topics
    assert all(len(line.split()) == 4 and line.split()[1] == "0" for line in lines)
    assert lines[0].startswith("1 0 ")
    assert [line.split()[0] for line in lines] == ["1"] * 12 + ["2"] * 12
    imported = _imported(path, world, "human-rt")
    assert {key: rel for key, (rel, _, _) in imported.items()} == _human(world)
    side = json.loads(written[1].read_text())
    assert side["counts"]["person"] == 24
    assert side["lines"][0]["source"] == "person"
    assert side["lines"][0]["assessors"] == ["alice"]


def test_merged_qrels_let_people_override_the_matcher(world, job, tmp_path):
    rule = DecisionRule(kind="threshold", threshold=0.3)
    export = qrels_export(
        collection=world.collection, kind="merged", job=job, rule=rule
    )
    human = _human(world)
    want = {}
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk), MatchOptions())
        for doc in world.pooled[topic.qid]:
            inferred = int(matcher.score(doc.text).score >= 0.3)
            want[(topic.qid, doc.docno)] = human.get((topic.qid, doc.docno), inferred)
    assert any(
        human[key] != int(v >= 0.3)
        for key, v in (
            (
                (t.qid, d.docno),
                TopicMatcher(job_nugget_specs(job, t.pk)).score(d.text).score,
            )
            for t in world.topics
            for d in world.pooled[t.qid]
        )
        if key in human
    ), "the real data should have at least one disagreement to override"
    path = tmp_path / "merged.qrels"
    export.write(path)
    imported = _imported(path, world, "merged-rt")
    assert {key: rel for key, (rel, _, _) in imported.items()} == want
    side = export.provenance
    assert side["job"]["lam"] == 0.5
    assert side["rule"]["threshold"] == 0.3
    by_key = {(x["qid"], x["docno"]): x for x in side["lines"]}
    for key, line in by_key.items():
        assert line["source"] == ("person" if key in human else "matcher")
        if line["source"] == "matcher" and line["rel"]:
            assert isinstance(line["nugget"], int)
    assert side["counts"] == {
        "lines": 48, "topics": 2, "person": 24, "matcher": 24,
        "relevant": sum(v >= 1 for v in want.values()), "later": 0, "checked": 0,
    }  # fmt: skip


def test_exports_are_deterministic(world, job):
    rule = DecisionRule(kind="top_n", n=5)
    first = qrels_export(
        collection=world.collection, kind="inferred", job=job, rule=rule
    )
    again = qrels_export(
        collection=world.collection, kind="inferred", job=job, rule=rule
    )
    assert first.text() == again.text()
    assert first.sidecar() == again.sidecar()
    # The top 5 with a match decide every document of the job, judged ones too;
    # a judged line carries the person's grade beside the rule's call.
    human = _human(world)
    want = 0
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk))
        ranked = sorted(
            ((matcher.score(d.text).score, d) for d in world.pooled[topic.qid]),
            key=lambda pair: (-pair[0], pair[1].pk),
        )[:5]
        want += sum(s > 0 for s, d in ranked)
    lines = first.provenance["lines"]
    assert {x["source"] for x in lines} == {"matcher"}
    assert len([x for x in lines if x["rel"] > 0]) == want
    for line in lines:
        if (line["qid"], line["docno"]) in human:
            assert line["person"]["rel"] == human[(line["qid"], line["docno"])]
        else:
            assert "person" not in line
    assert scores_export(job=job).text() == scores_export(job=job).text()


def test_scores_file_has_every_result_with_exact_scores(world, job):
    lines = scores_export(job=job).lines
    assert len(lines) == 48
    parsed = {(q, d): (float(s), n) for q, d, s, n in (line.split() for line in lines)}
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk))
        for doc in world.pooled[topic.qid]:
            match = matcher.score(doc.text)
            assert parsed[(topic.qid, doc.docno)] == (match.score, match.nugget or "-")


def test_prels_round_trip_with_inclusion_probabilities(world, tmp_path):
    # Inclusion probabilities of docs/reference/algorithms.md 1.5 (K = 3).
    probs = [0.719613822235819, 0.3419699492277922, 0.7060124955877192]
    sample = Sample.objects.create(
        pool=world.pool, name="statap", method="statap", size=3, seed=7
    )
    for topic in world.topics:
        for order, (doc, prob) in enumerate(
            zip(world.pooled[topic.qid][:3], probs, strict=True), 1
        ):
            SampleDocument.objects.create(
                sample=sample,
                topic=topic,
                document=doc,
                inclusion_prob=prob,
                order=order,
            )
    export = prels_export(sample=sample)
    assert len(export.lines) == 6
    path = tmp_path / "sample.prels"
    export.write(path)
    imported = _imported(path, world, "prels-rt", kind="prels")
    human = _human(world)
    want = {
        (t.qid, d.docno): (human[(t.qid, d.docno)], 1, p)
        for t in world.topics
        for d, p in zip(world.pooled[t.qid][:3], probs, strict=True)
    }
    assert imported == want


def test_passage_qrels_come_from_nugget_offsets(world):
    lines = passages_export(collection=world.collection).lines
    assert len(lines) == 6
    for line in lines:
        qid, docno, start, length = line.split()
        doc = next(d for d in world.pooled[qid] if d.docno == docno)
        assert start == "0"
        assert int(length) == doc.text.find(" . ") + 1


def test_export_command_names_file_and_line_of_a_bad_thresholds_file(
    world, job, tmp_path
):
    bad = tmp_path / "thresholds.txt"
    bad.write_text("1 0.4\n2 high\n")
    with pytest.raises(
        CommandError, match=rf"{bad}:2: threshold 'high' is not a number"
    ):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind", "inferred",
            "--job", str(job.pk), "--thresholds", str(bad), "-o", str(tmp_path / "x"),
        )  # fmt: skip
    assert not (tmp_path / "x").exists()


def test_export_command_writes_inferred_qrels_with_per_topic_thresholds(
    world, job, tmp_path
):
    table = tmp_path / "thresholds.txt"
    table.write_text("# qid threshold\n1 0.2\n")
    out = tmp_path / "inferred.qrels"
    call_command(
        "export_qrels", "--collection", world.collection.name, "--kind", "inferred",
        "--job", str(job.pk), "--thresholds", str(table), "-o", str(out),
    )  # fmt: skip
    rows = [line.split() for line in out.read_text().splitlines()]
    matcher = TopicMatcher(job_nugget_specs(job, world.topics[0].pk))
    human = _human(world)
    want = {d.docno: int(matcher.score(d.text).score >= 0.2) for d in world.pooled["1"]}
    assert {r[2]: int(r[3]) for r in rows if r[0] == "1"} == want
    assert any(("1", docno) in human for docno in want)  # judged ones decided too
    # No threshold for topic 2: nothing inferred relevant there.
    assert {r[3] for r in rows if r[0] == "2"} == {"0"}


def test_prels_export_refuses_a_sample_name_shared_by_two_pools(world, tmp_path):
    from tests.factories import PoolFactory, SampleFactory

    for pool in (world.pool, PoolFactory(collection=world.collection, name="other")):
        SampleFactory(pool=pool, name="twin")
    out = tmp_path / "twin.prels"
    with pytest.raises(CommandError, match="several samples named twin"):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind", "prels",
            "--sample", "twin", "--output", str(out),
        )  # fmt: skip
    assert not out.exists()


def test_an_export_written_to_files_is_its_text_and_sidecar(tmp_path):
    export = Export(
        lines=["1 0 d1 2", "1 0 d2 0"],
        provenance={"kind": "inferred", "lines": [{"qid": "1", "docno": "d1"}]},
    )
    written = export.write(tmp_path / "q.txt")
    assert [p.name for p in written] == ["q.txt", "q.txt.provenance.json"]
    assert written[0].read_text(encoding="utf-8") == export.text()
    assert written[1].read_text(encoding="utf-8") == export.sidecar()
