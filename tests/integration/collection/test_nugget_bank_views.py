"""Imported nuggets on the judging page and the job page: shown with their provenance,
scored like assessors' nuggets, never editable by an assessor."""

import json
import re

import pytest
from django.urls import reverse

from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.models import MatchJob
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db
PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor, tmp_path):
    world = build_world(shared_data, assessor, other_assessor)
    doc = world.docs["184"]
    start = doc.text.index(PHRASE)
    bank = tmp_path / "cranfield-bank.jsonl"
    rows = [
        {
            "qid": "1",
            "text": "thermo-aeroelastic similarity laws",
            "docno": "184",
            "start": start,
            "end": start + len(PHRASE),
            "span": PHRASE,
            "grade": 2,
        },
        {"qid": "1", "text": "wind tunnel models of aircraft", "grade": 1},
    ]
    bank.write_text("".join(json.dumps(r) + "\n" for r in rows))
    world.bank = nugget_bank_import(path=bank, collection="cranfield").bank
    return world


def _nuggets(response):
    raw = re.search(
        r'<script id="judge-nuggets" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    return json.loads(raw.group(1))


def test_the_judging_page_lists_imported_nuggets_with_their_file(
    world, assessor_client
):
    url = reverse("judge", args=[world.assignment.pk, world.position("184")])
    nuggets = _nuggets(assessor_client.get(url))
    imported = [n for n in nuggets if n["assessor"].startswith("imp")]
    assert {n["assessor"] for n in imported} == {"imported from cranfield-bank.jsonl"}
    assert {n["text"] for n in imported} == {
        "thermo-aeroelastic similarity laws",
        "wind tunnel models of aircraft",
    }
    assert not any(n["mine"] for n in imported)
    scored = {n["text"]: n["score"] for n in imported}
    assert scored["thermo-aeroelastic similarity laws"] > 0


def test_an_assessor_cannot_edit_an_imported_nugget(world, assessor_client):
    nugget = world.bank.nuggets.first()
    response = assessor_client.post(
        reverse("nugget-delete", args=[nugget.pk]), {"version": nugget.version}
    )
    assert response.status_code in (403, 404)
    assert world.bank.nuggets.filter(pk=nugget.pk).exists()


def test_the_job_page_counts_nuggets_by_source(world, staff_client, assessor):
    job = MatchJob.objects.create(collection=world.collection, source="collection")
    job.topics.set([world.topic])
    html = staff_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "imported from cranfield-bank.jsonl (2)" in html
