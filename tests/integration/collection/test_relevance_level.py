"""The relevance level: "relevant at grade >= k", set at import or on the staff page,
copied on every job at launch and kept there."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from nuggets_app.inference.services.matching import (
    MatchJobError,
    MatchParams,
    match_job_launch,
)
from nuggets_app.models import Collection, MatchJob
from tests.conftest import REPO

pytestmark = pytest.mark.django_db
ADI = REPO / "tests" / "data" / "public" / "adi"


def _import(*extra: str) -> str:
    out = io.StringIO()
    call_command(
        "import_collection", "--name", "adi", str(ADI / "docs.jsonl.gz"), *extra,
        stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    return out.getvalue()


def test_import_sets_the_level_and_a_job_keeps_the_one_it_was_launched_with():
    assert "adi: relevant at grade >= 2" in _import("--relevance-level", "2")
    collection = Collection.objects.get(name="adi")
    assert collection.relevance_level == 2
    job = MatchJob.objects.create(
        collection=collection, relevance_level_setting=collection.relevance_level
    )
    collection.relevance_level_setting = 1
    collection.save()
    job.refresh_from_db()
    assert job.relevance_level == 2
    assert job.relevance_text() == "relevant at grade >= 2"


def test_a_level_below_one_is_refused_before_anything_is_imported():
    with pytest.raises(CommandError, match="a grade of 1 or more"):
        _import("--relevance-level", "0")
    assert not Collection.objects.filter(name="adi").exists()


def test_staff_set_the_level_on_the_collection_page(staff_client):
    _import()
    collection = Collection.objects.get(name="adi")
    assert collection.relevance_level == 1  # the smallest positive grade
    url = reverse("staff-collection", args=[collection.name])
    page = staff_client.get(url)
    assert "relevant at grade &ge; 1" in page.content.decode()
    answer = staff_client.post(url, {"level": "2"}, follow=True)
    assert "Relevant at grade &gt;= 2 for jobs launched from now on" in (
        answer.content.decode()
    )
    collection.refresh_from_db()
    assert collection.relevance_level == 2
    staff_client.post(url, {"level": ""})
    collection.refresh_from_db()
    assert collection.relevance_level_setting is None


SEVEN = "no grade of adi reaches 7: its grades go up to 2"


def test_a_level_no_grade_reaches_is_refused_by_the_command_and_the_form(
    staff_client,
):
    with pytest.raises(CommandError, match=SEVEN):
        _import("--relevance-level", "7")
    collection = Collection.objects.get(name="adi")
    assert collection.relevance_level_setting is None
    url = reverse("staff-collection", args=[collection.name])
    # The form shows the level in force.
    page = staff_client.get(url).content.decode()
    assert re.search(r'<input[^>]*name="level"[^>]*value="1"', page)
    answer = staff_client.post(url, {"level": "7"})
    assert answer.status_code == 200
    assert SEVEN in answer.content.decode()
    collection.refresh_from_db()
    assert collection.relevance_level_setting is None
    # A job launched at such a level is refused with the same sentence.
    with pytest.raises(MatchJobError, match=SEVEN):
        match_job_launch(
            collection=collection,
            topics=list(collection.topics.all()),
            source="collection",
            params=MatchParams(relevance_level=7),
        )
