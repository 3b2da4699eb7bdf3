"""``manage.py correct_judgment``: staff correct a grade through the judging service,
and the history says who did it, when, from what to what, and why."""

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.judging.selectors.history import document_history
from nuggets_app.judging.services.judgments import judgment_record, judgment_state
from nuggets_app.models import Judgment, WorkChange
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _correct(**options) -> None:
    call_command("correct_judgment", **options)


def test_a_correction_leaves_history_and_a_newer_version(world, assessor, staff):
    doc = world.docs["184"]
    judgment_record(assessor=assessor, topic=world.topic, document=doc, relevance=2)
    _correct(
        qid="1", docno="184", assessor="alice", relevance="0", by="root",
        note="guideline 3: a passing mention",
    )  # fmt: skip
    judgment = Judgment.objects.get(assessor=assessor, document=doc)
    assert (judgment.relevance, judgment.version) == (0, 2)
    change = WorkChange.objects.order_by("id").last()
    assert (change.owner, change.actor, change.before, change.after) == (
        assessor, staff, {"relevance": 2, "version": 1},
        {"relevance": 0, "version": 2},
    )  # fmt: skip
    shown = document_history(
        owner_id=assessor.pk, topic_id=world.topic.pk, document_id=doc.pk
    )[0]
    assert (shown["what"], shown["from"], shown["to"], shown["by"]) == (
        "grade", 2, 0, "root",
    )  # fmt: skip
    assert shown["note"] == "guideline 3: a passing mention"
    state = judgment_state(
        assessor_id=assessor.pk, topic_id=world.topic.pk, document_id=doc.pk
    )
    assert (state["relevance"], state["version"], state["by"]) == (0, 2, "root")


def test_a_correction_is_checked_like_any_grade(world, assessor, staff):
    doc = world.docs["184"]
    judgment_record(assessor=assessor, topic=world.topic, document=doc, relevance=1)
    with pytest.raises(CommandError, match=r"relevance 7 is not one of \[0, 1, 2\]"):
        _correct(qid="1", docno="184", assessor="alice", relevance="7", by="root")
    with pytest.raises(CommandError, match="alice has no judgment of document 29"):
        _correct(qid="1", docno="29", assessor="alice", relevance="0", by="root")
    with pytest.raises(CommandError, match="alice is not staff"):
        _correct(qid="1", docno="184", assessor="alice", relevance="0", by="alice")
    assert Judgment.objects.get(document=doc).relevance == 1
    assert WorkChange.objects.count() == 1
