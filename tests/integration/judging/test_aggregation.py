"""Several assessors' grades made one human label: the human export under each rule,
its sidecar, the ``export_qrels --aggregate`` options, and the labels the model and the
estimators read being the export's."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.inference.services.exports import prels_export, qrels_export
from nuggets_app.ir.aggregation import Aggregation
from nuggets_app.judging.selectors import human_grades
from nuggets_app.judging.services.adjudication import adjudication_record
from nuggets_app.judging.services.aggregation import aggregation_set
from nuggets_app.judging.services.judgments import JudgingError, judgment_record
from nuggets_app.models import Assignment, Judgment, WorkChange
from tests import factories as f
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db

# Per document: alice, bob, carol (None: not judged).
GRADES = {
    "184": (2, 0, 0),
    "29": (1, 1, 0),
    "31": (0, 2, None),
    "12": (1, None, None),
}


@pytest.fixture
def world(shared_data, assessor, other_assessor, staff):
    world = build_world(shared_data, assessor, other_assessor)
    carol = f.UserFactory(username="carol")
    people = (assessor, other_assessor, carol)
    for person in people[1:]:
        Assignment.objects.create(
            sample=world.assignment.sample, topic=world.topic, assessor=person
        )
    for docno, grades in GRADES.items():
        for person, grade in zip(people, grades, strict=True):
            if grade is not None:
                judgment_record(
                    assessor=person, topic=world.topic, document=world.docs[docno],
                    relevance=grade,
                )  # fmt: skip
    world.extra["staff"] = staff
    return world


def _lines(export) -> dict[str, int]:
    return {line.split()[2]: int(line.split()[3]) for line in export.lines}


def test_each_rule_gives_its_stated_grade_and_the_sidecar_names_it(world):
    adjudication_record(
        adjudicator=world.extra["staff"], topic=world.topic,
        document=world.docs["184"], relevance=1,
    )  # fmt: skip
    before = list(Judgment.objects.order_by("pk").values())
    expected = {
        # highest: the top grade; majority: the most frequent, ties to the higher;
        # primary bob: his grade, else the highest; adjudicated: the decision, else
        # the highest.
        Aggregation(): {"184": 2, "29": 1, "31": 2, "12": 1},
        Aggregation(rule="majority"): {"184": 0, "29": 1, "31": 2, "12": 1},
        Aggregation(rule="majority", ties="lower"): {
            "184": 0, "29": 1, "31": 0, "12": 1,
        },
        Aggregation(rule="primary", primary="bob"): {
            "184": 0, "29": 1, "31": 2, "12": 1,
        },
        Aggregation(rule="adjudicated"): {"184": 1, "29": 1, "31": 2, "12": 1},
    }  # fmt: skip
    for rule, want in expected.items():
        export = qrels_export(
            collection=world.collection, kind="human", aggregation=rule
        )
        assert _lines(export) == want, rule
        assert export.provenance["aggregation"]["rule"] == rule.rule
        assert export.provenance["aggregation"]["text"] == rule.describe()
    adjudicated = qrels_export(
        collection=world.collection,
        kind="human",
        aggregation=Aggregation(rule="adjudicated"),
    )
    line = next(r for r in adjudicated.provenance["lines"] if r["docno"] == "184")
    assert (line["how"], line["assessors"]) == ("adjudicated", ["root"])
    # The assessors' own rows are untouched by any of it.
    assert list(Judgment.objects.order_by("pk").values()) == before


def test_the_model_and_the_estimates_read_the_labels_the_export_shows(world):
    topic = world.topic
    for rule in (Aggregation(rule="majority"), Aggregation(rule="adjudicated")):
        aggregation_set(collection=world.collection, aggregation=rule)
        world.collection.refresh_from_db()
        export = qrels_export(collection=world.collection, kind="human")
        assert export.provenance["aggregation"]["rule"] == rule.rule
        grades = human_grades([topic.pk])
        read = {
            docno: grades[(topic.pk, doc.pk)]
            for docno, doc in world.docs.items()
            if (topic.pk, doc.pk) in grades
        }
        assert read == _lines(export)
        prels = {
            line.split()[1]: int(line.split()[2])
            for line in prels_export(sample=world.assignment.sample).lines
        }
        assert prels == _lines(export)


def test_export_qrels_aggregate_writes_the_rule_into_the_sidecar(world, tmp_path):
    out = tmp_path / "human.qrels"
    call_command(
        "export_qrels", "--collection", "cranfield", "--aggregate", "primary",
        "--primary", "bob", "--output", str(out),
    )  # fmt: skip
    side = json.loads((tmp_path / "human.qrels.provenance.json").read_text())
    assert side["aggregation"]["rule"] == "primary"
    assert side["aggregation"]["primary"] == "bob"
    assert "1 0 184 0\n" in out.read_text()
    with pytest.raises(CommandError, match="primary assessor"):
        call_command(
            "export_qrels", "--collection", "cranfield", "--aggregate", "primary"
        )
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command(
            "export_qrels", "--collection", "cranfield", "--aggregate", "primary",
            "--primary", "nobody",
        )  # fmt: skip


def test_a_decision_is_kept_with_its_history_and_refused_when_stale(world):
    staff, topic, doc = world.extra["staff"], world.topic, world.docs["184"]
    first = adjudication_record(
        adjudicator=staff, topic=topic, document=doc, relevance=1, version=0
    )
    second = adjudication_record(
        adjudicator=staff, topic=topic, document=doc, relevance=2, version=1,
        note="the narrative asks for the method",
    )  # fmt: skip
    assert (first.pk, second.version, second.relevance) == (second.pk, 2, 2)
    changes = WorkChange.objects.filter(
        kind=WorkChange.ADJUDICATION, object_id=first.pk
    )
    assert [(c.before, c.after["relevance"]) for c in changes.order_by("id")] == [
        (None, 1),
        ({"relevance": 1, "version": 1, "note": ""}, 2),
    ]
    with pytest.raises(JudgingError, match="version 2, not 1"):
        adjudication_record(
            adjudicator=staff, topic=topic, document=doc, relevance=0, version=1
        )
    with pytest.raises(JudgingError, match="only staff"):
        adjudication_record(
            adjudicator=world.assignment.assessor, topic=topic, document=doc,
            relevance=0,
        )  # fmt: skip
    with pytest.raises(JudgingError, match="nothing to adjudicate"):
        adjudication_record(
            adjudicator=staff, topic=topic, document=world.docs["51"], relevance=0
        )
