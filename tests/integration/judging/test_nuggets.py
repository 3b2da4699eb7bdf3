"""nugget_save / nugget_update / nugget_delete on real Cranfield documents."""

import uuid

import pytest

from nuggets_app.judging.services.judgments import JudgingError, NotAssigned
from nuggets_app.judging.services.nuggets import (
    DuplicateNugget,
    NuggetConflict,
    SpanMismatch,
    nugget_delete,
    nugget_save,
    nugget_update,
)
from nuggets_app.models import Nugget
from tests import factories as f
from tests.integration.worlds.judging import build_world

PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _save(world, assessor, **overrides):
    doc = world.docs["184"]
    start = doc.text.index(PHRASE)
    args = {
        "assessor": assessor,
        "topic": world.topic,
        "document": doc,
        "start": start,
        "end": start + len(PHRASE),
        "text": "complete similarity needs identical aircraft and model",
        "keywords": ["similarity", " model ", "", "similarity"],
        "grade": 2,
        "aspect": "a1",
        "client_uuid": uuid.uuid4(),
        "span_text": PHRASE,
    }
    args.update(overrides)
    return nugget_save(**args)


def test_a_nugget_keeps_its_exact_offsets_and_span_text(world, assessor):
    nugget, created = _save(world, assessor)
    nugget.refresh_from_db()
    text = world.docs["184"].text
    assert created
    assert text[nugget.start : nugget.end] == PHRASE == nugget.span_text
    assert nugget.keywords == ["similarity", "model"]
    assert (nugget.grade, nugget.aspect, nugget.version) == (2, "a1", 1)


def test_a_replayed_client_uuid_creates_one_nugget(world, assessor):
    key = uuid.uuid4()
    first, created_first = _save(world, assessor, client_uuid=key)
    again, created_again = _save(world, assessor, client_uuid=key, text="other words")
    assert (created_first, created_again) == (True, False)
    assert again.pk == first.pk
    assert Nugget.objects.count() == 1


def test_another_assessors_client_uuid_is_not_revealed(world, assessor, other_assessor):
    key = uuid.uuid4()
    _save(world, assessor, client_uuid=key)
    with pytest.raises(NotAssigned):
        _save(world, other_assessor, client_uuid=key)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(-1, 5, "not inside"), (5, 5, "not inside"), (10, 10**6, "not inside")],
)
def test_it_rejects_offsets_outside_the_text(world, assessor, start, end, message):
    with pytest.raises(JudgingError, match=message):
        _save(world, assessor, start=start, end=end, span_text=None)
    assert not Nugget.objects.exists()


def test_it_rejects_a_span_text_that_drifted_from_the_offsets(world, assessor):
    with pytest.raises(SpanMismatch, match="differs from the document"):
        _save(world, assessor, span_text="thermo-aeroelastic similaritY")
    assert not Nugget.objects.exists()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"text": "   "}, "text"),
        ({"grade": 7}, "grade"),
        ({"aspect": "zz"}, "aspect"),
        ({"keywords": ["x" * 101]}, "keywords"),
    ],
)
def test_it_rejects_bad_fields_by_name(world, assessor, override, field):
    with pytest.raises(JudgingError) as info:
        _save(world, assessor, **override)
    assert info.value.field == field
    assert not Nugget.objects.exists()


def test_the_same_span_twice_is_refused_as_a_duplicate(world, assessor, other_assessor):
    first, _ = _save(world, assessor)
    with pytest.raises(DuplicateNugget, match=f"nugget {first.pk}") as info:
        _save(world, assessor, text="another reading of the same words")
    assert info.value.status == 409
    # Whitespace around the same words is the same span.
    text = world.docs["184"].text
    start = text.index(PHRASE) - 1
    with pytest.raises(DuplicateNugget):
        _save(world, assessor, start=start, span_text=text[start : first.end])
    assert Nugget.objects.count() == 1


def test_a_span_is_trimmed_of_whitespace_at_both_ends(world, assessor):
    text = world.docs["184"].text
    start = text.index(PHRASE) - 1
    end = start + 1 + len(PHRASE) + 1
    assert text[start].isspace()
    assert text[end - 1].isspace()
    nugget, _ = _save(world, assessor, start=start, end=end, span_text=text[start:end])
    assert (nugget.start, nugget.end) == (start + 1, end - 1)
    assert nugget.span_text == PHRASE


@pytest.mark.parametrize("needle", ["t", "the", " similarity ", "research ."])
def test_a_selection_too_short_to_be_information_is_refused(world, assessor, needle):
    text = world.docs["184"].text
    start = text.index(needle)
    span = text[start : start + len(needle)]
    with pytest.raises(JudgingError, match="too short") as info:
        _save(world, assessor, start=start, end=start + len(needle), span_text=span)
    assert info.value.field == "span_text"
    assert not Nugget.objects.exists()


def test_it_refuses_a_document_outside_the_assessors_sample(world, other_assessor):
    with pytest.raises(NotAssigned):
        _save(world, other_assessor)
    assert not Nugget.objects.exists()


def test_offsets_count_code_points_in_text_with_astral_and_crlf_characters(
    world, assessor
):
    text = "Line one\r\nthe \U0001d518 symbol, caf\u0065\u0301 and \u05e9\u05dc\u05d5\u05dd end"
    doc = f.DocumentFactory(collection=world.collection, docno="X1", text=text)
    f.SampleDocumentFactory(
        sample=world.assignment.sample, topic=world.topic, document=doc, order=99
    )
    start = text.index("\U0001d518")
    nugget, _ = _save(
        world,
        assessor,
        document=doc,
        start=start,
        end=start + 8,
        span_text="\U0001d518 symbol",
    )
    assert nugget.span_text == "\U0001d518 symbol"


def test_an_edit_at_a_stale_version_is_a_conflict_carrying_the_server_copy(
    world, assessor
):
    nugget, _ = _save(world, assessor)
    edited = nugget_update(
        assessor=assessor,
        nugget=nugget,
        version=1,
        text="edited",
        keywords=["mach"],
        grade=1,
        aspect="a2",
    )
    assert (edited.text, edited.keywords, edited.version) == ("edited", ["mach"], 2)
    with pytest.raises(NuggetConflict) as info:
        nugget_update(
            assessor=assessor,
            nugget=nugget,
            version=1,
            text="from an old tab",
            keywords=[],
            grade=None,
            aspect="",
        )
    assert info.value.current.text == "edited"
    nugget.refresh_from_db()
    assert (nugget.text, nugget.span_text, nugget.version) == ("edited", PHRASE, 2)


def test_only_the_owner_edits_or_deletes(world, assessor, other_assessor):
    nugget, _ = _save(world, assessor)
    with pytest.raises(NotAssigned):
        nugget_update(
            assessor=other_assessor,
            nugget=nugget,
            version=1,
            text="mine now",
            keywords=[],
            grade=None,
            aspect="",
        )
    with pytest.raises(NotAssigned):
        nugget_delete(assessor=other_assessor, nugget=nugget)
    assert Nugget.objects.get().text != "mine now"


def test_delete_is_idempotent_and_version_checked(world, assessor):
    nugget, _ = _save(world, assessor)
    with pytest.raises(NuggetConflict):
        nugget_delete(assessor=assessor, nugget=nugget, version=5)
    nugget_delete(assessor=assessor, nugget=nugget, version=1)
    nugget_delete(assessor=assessor, nugget=nugget, version=1)
    assert not Nugget.objects.exists()
