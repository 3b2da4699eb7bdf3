"""A judge's own figures, apart from the default: its qrels download and each run's
expected AP under its labels alone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.evaluation.selectors import collection_runs
from nuggets_app.ir.expected import run_expected
from nuggets_app.judges.services import judge_labels_import
from tests.integration.worlds.judges import judge_grades, judged_demo, write_judge_qrels

pytestmark = pytest.mark.django_db


def test_the_judges_qrels_and_expected_ap_are_its_own(staff_client, tmp_path):
    world = judged_demo()
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    judge_labels_import(path=path, collection=world.collection, name="flipper")
    qrels = staff_client.get(reverse("staff-judge-qrels", args=["demo", "flipper"]))
    assert qrels.status_code == 200
    assert "demo-judge-flipper.qrels" in qrels["Content-Disposition"]
    lines = {tuple(line.split()) for line in qrels.content.decode().splitlines()}
    grades = judge_grades(world)
    assert {(q, "0", d, str(g)) for (q, d), g in grades.items()} <= lines

    page = staff_client.get(reverse("staff-judge-figures", args=["demo", "flipper"]))
    assert page.status_code == 200
    assert "not the collection's estimates" in page.text
    rows = {row[0]: row for row in page.context["table"]["rows"]}
    level = world.collection.relevance_level
    # Every label the judge gave, those beyond the pool too (its qrels).
    probs: dict[str, dict[str, float]] = {}
    for q, _, d, g in lines:
        probs.setdefault(q, {})[d] = float(int(g) >= level)
    for name, scores in collection_runs(world.collection).items():
        expected = run_expected(probs, scores, measures=("EAP",)).mean["EAP"]
        assert rows[name][1] == pytest.approx(expected)
    listing = staff_client.get(reverse("staff-judges", args=["demo"]))
    assert "the judge's own figures" in listing.text
