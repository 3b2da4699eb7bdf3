"""The people in a release of the demo judged by two assessors (alice, bob), with a
known-answer check and an adjudicated disagreement under the rule "adjudicated, else
alice's grade": a pseudonymous release names nobody in any file, and its own
``judgments.tsv`` and ``adjudications.tsv`` rebuild ``qrels.human.txt`` line for line
under the manifest's rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from nuggets_app.evaluation.services.releases import release_write
from nuggets_app.importers.fields import qid_key
from nuggets_app.ir.aggregation import Aggregation, grade_combine
from nuggets_app.judging.services.adjudication import adjudication_record
from nuggets_app.judging.services.aggregation import aggregation_set
from nuggets_app.models import Document, Judgment, SampleDocument, Topic
from tests.integration.worlds.demo import DemoWorld, demo_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(monkeypatch) -> DemoWorld:
    """The demo world, plus: bob disagrees with alice on a relevant document of
    topic 1 and the admin adjudicates it; bob judges a known answer of topic 1 that
    nobody else judged; the collection's rule is "adjudicated, else alice's"."""
    world = demo_world(monkeypatch)
    users = get_user_model().objects
    topic = Topic.objects.get(collection=world.collection, qid="1")
    relevant = (
        Judgment.objects.filter(topic=topic, assessor__username="bob", relevance__gt=0)
        .order_by("document__docno")
        .first()
    )
    assert relevant is not None
    Judgment.objects.filter(pk=relevant.pk).update(relevance=0)
    adjudication_record(
        adjudicator=users.get(username="admin"),
        topic=topic,
        document=relevant.document,
        relevance=1,
    )
    drawn = SampleDocument.objects.filter(topic=topic).values("document_id")
    known = (
        Document.objects.filter(collection=world.collection)
        .exclude(pk__in=drawn)
        .order_by("docno")
        .first()
    )
    Judgment.objects.create(
        topic=topic,
        document=known,
        assessor=users.get(username="bob"),
        relevance=2,
        quality_check=True,
    )
    aggregation_set(
        collection=world.collection,
        aggregation=Aggregation(
            rule="adjudicated", fallback="primary", primary="alice"
        ),
    )
    return world


def _release(world: DemoWorld, folder: Path) -> dict:
    release_write(collection=world.collection, job=world.job, out=folder)
    return json.loads((folder / "manifest.json").read_text())


def test_a_pseudonymous_release_names_nobody_in_any_file(judged, tmp_path):
    folder = tmp_path / "release"
    manifest = _release(judged, folder)
    assert manifest["assessors"] == "pseudonyms"
    names = list(get_user_model().objects.values_list("username", flat=True))
    assert {"alice", "bob", "admin"} <= set(names)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert len(files) == len(manifest["files"]) + 1
    found = [
        f"{path.relative_to(folder)}: {name}"
        for path in files
        for name in names
        if re.search(rf"\b{re.escape(name)}\b", path.read_text(encoding="utf-8"))
    ]
    assert found == []
    # The sidecars still say who gave each grade, by pseudonym.
    side = json.loads((folder / "qrels.human.txt.provenance.json").read_text())
    adjudicated = [line for line in side["lines"] if line["how"] == "adjudicated"]
    assert len(adjudicated) == 1
    assert adjudicated[0]["assessors"][0].startswith("assessor-")
    assert side["aggregation"]["primary"].startswith("assessor-")


def _tsv(path: Path) -> list[dict[str, str]]:
    header, *rows = path.read_text().splitlines()
    return [dict(zip(header.split("\t"), row.split("\t"), strict=True)) for row in rows]


def test_the_release_rebuilds_its_human_qrels_from_its_own_judgments(judged, tmp_path):
    folder = tmp_path / "release"
    manifest = _release(judged, folder)
    judgments = _tsv(folder / "judgments.tsv")
    roles = {row["role"] for row in judgments}
    assert roles == {"sample", "check"}
    (check,) = [row for row in judgments if row["role"] == "check"]
    assert (check["qid"], check["relevance"]) == ("1", "2")
    rule = Aggregation.from_dict(manifest["human_qrels_rule"]["spec"])
    assert rule.rule == "adjudicated"
    grades: dict[tuple[str, str], dict[str, int]] = {}
    for row in judgments:
        if row["role"] != "check":
            key = (row["qid"], row["docno"])
            grades.setdefault(key, {})[row["assessor"]] = int(row["relevance"])
    decided = {
        (row["qid"], row["docno"]): int(row["relevance"])
        for row in _tsv(folder / "adjudications.tsv")
    }
    assert len(decided) == 1
    rebuilt = []
    for key in sorted(set(grades) | set(decided), key=lambda k: (qid_key(k[0]), k[1])):
        grade, _ = grade_combine(grades.get(key, {}), rule, decided.get(key))
        rebuilt.append(f"{key[0]} 0 {key[1]} {grade}")
    assert rebuilt == (folder / "qrels.human.txt").read_text().splitlines()


def test_the_release_page_states_the_collections_rule(judged, client, staff):
    client.force_login(staff)
    page = client.get(f"/collections/{judged.collection.name}/release/").text
    stated = page.split('id="release-aggregation">', 1)[1].split("</span>", 1)[0]
    assert (
        stated
        == "the adjudicated grade; where nobody adjudicated, alice&#x27;s grade, else the highest"
    )
    assert "the highest grade)" not in page


def test_the_job_page_states_the_collections_rule(judged, staff_client):
    page = staff_client.get(reverse("job-detail", args=[judged.job.pk])).text
    stated = page.split('id="job-aggregation">', 1)[1].split("</span>", 1)[0]
    assert stated.startswith("the adjudicated grade; where nobody adjudicated")


def test_no_template_words_an_aggregation_rule_of_its_own():
    """Pages state the rule in force from the collection (``aggregation.describe``),
    never a rule's words written into the template."""
    templates = Path(__file__).parents[3] / "assessor_ui" / "templates"
    words = [
        text
        for rule in ("highest", "majority")
        for text in (Aggregation(rule=rule).describe(), "the highest grade")
    ]
    found = [
        f"{path.name}: {text}"
        for path in templates.rglob("*.html")
        for text in words
        if text in path.read_text(encoding="utf-8")
    ]
    assert found == []
