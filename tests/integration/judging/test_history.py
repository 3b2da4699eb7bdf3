"""Judgment versions, the history of judgments and nuggets, and undo (services)."""

import uuid

import pytest

from nuggets_app.judging.selectors.history import document_history
from nuggets_app.judging.services.judgments import (
    JudgmentConflict,
    judgment_record,
)
from nuggets_app.judging.services.nuggets import (
    nugget_delete,
    nugget_save,
    nugget_update,
)
from nuggets_app.judging.services.undo import NothingToUndo, change_undo
from nuggets_app.models import Judgment, Nugget, WorkChange
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db
PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _judge(world, assessor, relevance, **kwargs) -> Judgment:
    return judgment_record(
        assessor=assessor, topic=world.topic, document=world.docs["184"],
        relevance=relevance, **kwargs,
    )  # fmt: skip


def _undo(world, assessor) -> WorkChange:
    return change_undo(
        actor=assessor, owner_id=assessor.pk, topic_id=world.topic.pk,
        document_id=world.docs["184"].pk,
    )  # fmt: skip


def test_a_save_based_on_an_older_version_is_a_conflict_that_keeps_the_time(
    world, assessor
):
    assert _judge(world, assessor, 1, version=0).version == 1
    with pytest.raises(JudgmentConflict, match="at version 1, not 0") as caught:
        _judge(world, assessor, 0, version=0, active_seconds_delta=4)
    current = caught.value.current
    assert (current["relevance"], current["version"], current["by"]) == (1, 1, "alice")
    assert current["at"]
    stored = Judgment.objects.get()
    assert (stored.relevance, stored.version, stored.active_seconds) == (1, 1, 4.0)
    # Keep mine: saved again on the version seen in the conflict.
    assert _judge(world, assessor, 0, version=1).relevance == 0


def test_a_retried_save_is_stored_once(world, assessor):
    save = uuid.uuid4()
    first = _judge(
        world, assessor, 2, version=0, client_uuid=save, active_seconds_delta=3
    )
    again = _judge(
        world, assessor, 2, version=0, client_uuid=save, active_seconds_delta=3
    )
    assert (again.pk, again.version) == (first.pk, 1)
    assert Judgment.objects.get().active_seconds == 3.0
    assert WorkChange.objects.filter(client_uuid=save).count() == 1


def test_the_same_grade_again_is_no_change(world, assessor):
    _judge(world, assessor, 1)
    assert _judge(world, assessor, 1).version == 1
    assert WorkChange.objects.count() == 1


def _nugget(world, assessor) -> Nugget:
    doc = world.docs["184"]
    start = doc.text.index(PHRASE)
    nugget, _ = nugget_save(
        assessor=assessor, topic=world.topic, document=doc, start=start,
        end=start + len(PHRASE), text=PHRASE, keywords=[], grade=None, aspect="",
        client_uuid=uuid.uuid4(),
    )  # fmt: skip
    return nugget


def test_every_change_is_in_the_history_and_undo_walks_back_through_it(world, assessor):
    _judge(world, assessor, 1)
    _judge(world, assessor, 2)
    nugget = _nugget(world, assessor)
    nugget_update(
        assessor=assessor, nugget=nugget, version=1, text="similarity laws",
        keywords=["laws"], grade=None, aspect="a1",
    )  # fmt: skip
    nugget_delete(assessor=assessor, nugget=Nugget.objects.get(), version=2)
    shown = document_history(
        owner_id=assessor.pk, topic_id=world.topic.pk, document_id=world.docs["184"].pk
    )
    assert [(c["what"], c["from"], c["to"], c["by"]) for c in shown] == [
        ("nugget deleted", "similarity laws", None, "alice"),
        ("nugget edited", PHRASE, "similarity laws", "alice"),
        ("nugget made", None, PHRASE, "alice"),
        ("grade", 1, 2, "alice"),
        ("grade", None, 1, "alice"),
    ]

    _undo(world, assessor)  # the delete: the nugget is back, as it was
    back = Nugget.objects.get(pk=nugget.pk)
    assert (back.text, back.keywords, back.aspect, back.client_uuid) == (
        "similarity laws", ["laws"], "a1", nugget.client_uuid,
    )  # fmt: skip
    _undo(world, assessor)  # the edit
    back.refresh_from_db()
    assert (back.text, back.keywords, back.aspect) == (PHRASE, [], "")
    _undo(world, assessor)  # the creation
    assert not Nugget.objects.exists()
    _undo(world, assessor)  # the grade 1 -> 2
    assert Judgment.objects.get().relevance == 1
    _undo(world, assessor)  # the first grade
    assert Judgment.objects.get().relevance is None
    with pytest.raises(NothingToUndo, match="nothing left to undo"):
        _undo(world, assessor)
    assert WorkChange.objects.filter(undo_of__isnull=False).count() == 5
    assert not WorkChange.objects.filter(undo_of__isnull=True, undone=False).exists()
