"""Judges' labels imported all or nothing, kept read-only once audited, and audited
against the people's sample of the demo."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from nuggets_app.evaluation.services.judge_audits import (
    audit_sample,
    judge_audit_build,
    people_side,
    pool_pairs,
)
from nuggets_app.importers import ImportFormatError
from nuggets_app.judges.selectors import (
    JudgeAuditError,
    judge_reading,
)
from nuggets_app.judges.services import (
    JudgeInfo,
    JudgeInUseError,
    judge_labels_import,
    judges_release,
)
from nuggets_app.models import Judge, JudgeLabel, PoolDocument
from tests import factories as f
from tests.integration.worlds.judges import (
    BEYOND,
    judge_grades,
    judged_demo,
    write_judge_qrels,
)

pytestmark = pytest.mark.django_db
LLMJUDGE = Path(__file__).resolve().parents[2] / "data" / "llmjudge"


@pytest.fixture
def world():
    return judged_demo()


@pytest.fixture
def llmjudge():
    """A labels-only collection: the four topics of the LLMJudge excerpt kept in
    tests/data (its README), no documents."""
    collection = f.CollectionFactory(name="llmjudge", relevance_level_setting=2)
    for qid in ("q0", "q1", "q32", "q38"):
        f.TopicFactory(collection=collection, qid=qid)
    return collection, LLMJUDGE / "judges"


def test_labels_of_documents_the_collection_lacks_are_kept_by_docno(llmjudge):
    collection, judges = llmjudge
    summary = judge_labels_import(
        path=judges / "h2oloo-fewself.qrels",
        collection=collection,
        name="h2oloo-fewself",
        info=JudgeInfo(model="gpt-4o", notes="LLMJudge 2024"),
    )
    assert (summary.records, summary.created, summary.skipped_documents) == (
        420,
        420,
        420,
    )
    judge = Judge.objects.get(collection=collection, name="h2oloo-fewself")
    assert (judge.kind, judge.model, judge.source_file) == (
        "graded",
        "gpt-4o",
        "h2oloo-fewself.qrels",
    )
    qid, _, docno, grade = (
        (judges / "h2oloo-fewself.qrels").read_text().splitlines()[0].split()
    )
    label = JudgeLabel.objects.get(judge=judge, topic__qid=qid, docno=docno)
    assert (label.document, label.grade) == (None, int(grade))


def test_a_file_with_one_bad_line_is_refused_whole(llmjudge, tmp_path):
    collection, judges = llmjudge
    lines = (judges / "TREMA-rubric0.qrels").read_text().splitlines()
    lines[150] = lines[150].rsplit(" ", 1)[0] + " high"
    bad = tmp_path / "rubric.qrels"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ImportFormatError, match=r"rubric.qrels:151: grade is not an"):
        judge_labels_import(path=bad, collection=collection, name="rubric")
    assert not Judge.objects.exists()
    assert not JudgeLabel.objects.exists()


def test_a_bad_file_leaves_the_judges_earlier_labels(llmjudge, tmp_path):
    collection, judges = llmjudge
    judge_labels_import(
        path=judges / "TREMA-rubric0.qrels", collection=collection, name="rubric"
    )
    bad = tmp_path / "rubric.qrels"
    bad.write_text("q0 0 p1 2\nq99 0 p2 1\n")
    with pytest.raises(ImportFormatError, match=r"rubric.qrels:2: unknown topic"):
        judge_labels_import(path=bad, collection=collection, name="rubric")
    assert JudgeLabel.objects.filter(judge__name="rubric").count() == 420


def test_probabilities_are_read_as_the_probability_of_the_level(llmjudge, tmp_path):
    collection, _ = llmjudge
    path = tmp_path / "umbrela.jsonl"
    path.write_text(
        json.dumps(
            {
                "qid": "q0",
                "docno": "p1",
                "prob_0": 0.1,
                "prob_1": 0.2,
                "prob_2": 0.3,
                "prob_3": 0.4,
            }
        )
        + "\n"
    )
    judge_labels_import(path=path, collection=collection, name="umbrela")
    judge = Judge.objects.get(name="umbrela")
    reading = judge_reading(judge=judge, level=2)
    assert judge.kind == "probabilities"
    assert reading.level == 0.5
    assert math.isclose(reading.values["q0"]["p1"], 0.7)


def test_scores_outside_0_1_need_a_threshold(llmjudge, tmp_path):
    collection, _ = llmjudge
    path = tmp_path / "scores.txt"
    path.write_text("q0 Q0 p1 7.5\nq0 Q0 p2 -1.25\n")
    judge_labels_import(path=path, collection=collection, name="bm25ish")
    with pytest.raises(JudgeAuditError, match="has no threshold"):
        judge_reading(judge=Judge.objects.get(name="bm25ish"), level=2)
    judge_labels_import(
        path=path,
        collection=collection,
        name="bm25ish",
        info=JudgeInfo(threshold=5.0),
    )
    assert judge_reading(judge=Judge.objects.get(name="bm25ish"), level=2).level == 5


def test_pool_pairs_hold_the_pool_the_sample_and_the_judge(world, tmp_path):
    path = write_judge_qrels(world, tmp_path / "judge.qrels")
    judge_labels_import(path=path, collection=world.collection, name="flipper")
    judge = Judge.objects.get(name="flipper")
    reading = judge_reading(judge=judge, level=world.collection.relevance_level)
    pairs = pool_pairs(people=people_side(sample=world.sample), reading=reading)
    assert len(pairs) == PoolDocument.objects.filter(pool=world.sample.pool).count()
    grades = judge_grades(world)
    assert all(p.judge_grade == grades[(p.qid, p.docno)] for p in pairs)
    judged = [p for p in pairs if p.human_grade is not None]
    assert len(judged) == world.sample.documents.count()
    assert all(
        p.human_grade == world.truth.get(p.qid, {}).get(p.docno, 0) for p in judged
    )
    assert all(0 < p.inclusion_prob <= 1 for p in judged)


def test_the_audit_reads_the_latest_sample_and_locks_the_labels(world, tmp_path):
    path = write_judge_qrels(world, tmp_path / "judge.qrels")
    judge_labels_import(path=path, collection=world.collection, name="flipper")
    assert audit_sample(collection=world.collection) == world.sample
    report = judge_audit_build(collection=world.collection)
    (entry,) = report.entries
    assert entry.beyond_pool == len(BEYOND)
    assert entry.judge_level == world.collection.relevance_level
    kappa = entry.audit.kappa
    assert kappa.low <= kappa.value <= kappa.high
    judge = Judge.objects.get(name="flipper")
    assert judge.used_by == "the audit against sample demo-statap15"
    with pytest.raises(JudgeInUseError, match="import the file as a judge of another"):
        judge_labels_import(path=path, collection=world.collection, name="flipper")
    assert JudgeLabel.objects.filter(judge=judge).count() == entry.labels


def test_an_audit_without_a_judge_or_a_sample_says_what_to_do(llmjudge, world):
    with pytest.raises(JudgeAuditError, match="has no judge: import one first"):
        judge_audit_build(collection=world.collection)
    collection, judges = llmjudge
    judge_labels_import(
        path=judges / "TREMA-rubric0.qrels", collection=collection, name="rubric"
    )
    with pytest.raises(JudgeAuditError, match="no statAP sample of people's"):
        judge_audit_build(collection=collection)


def test_a_judges_release_file_reads_back_as_the_same_labels(llmjudge, tmp_path):
    collection, judges = llmjudge
    judge_labels_import(
        path=judges / "h2oloo-fewself.qrels", collection=collection, name="h2o"
    )
    path = tmp_path / "p.csv"
    path.write_text("qid,docno,prob_yes\nq0,p1,0.25\nq38,p2,1\n")
    judge_labels_import(path=path, collection=collection, name="yes/no")
    files, described = judges_release(collection=collection)
    assert sorted(files) == ["judges/h2o.qrels", "judges/yes_no.jsonl"]
    assert [(d["name"], d["kind"], d["labels"]) for d in described] == [
        ("h2o", "graded", 420),
        ("yes/no", "probabilities", 2),
    ]
    assert sorted(files["judges/h2o.qrels"].splitlines()) == sorted(
        (judges / "h2oloo-fewself.qrels").read_text().splitlines()
    )
    again = tmp_path / "yes_no.jsonl"
    again.write_text(files["judges/yes_no.jsonl"])
    judge_labels_import(path=again, collection=collection, name="again")
    assert judge_reading(judge=Judge.objects.get(name="again"), level=2).values == {
        "q0": {"p1": 0.25},
        "q38": {"p2": 1.0},
    }
    assert Judge.objects.get(name="h2o").used_by == "a release"
