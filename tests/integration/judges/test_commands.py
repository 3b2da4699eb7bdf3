"""``import_judge_labels`` and ``audit_judges`` on the judged demo."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.models import Judge, JudgeLabel
from tests.integration.worlds.judges import BEYOND, judged_demo, write_judge_qrels

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return judged_demo()


def _call(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_import_then_audit_writes_every_figure_with_its_interval(world, tmp_path):
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    out = _call(
        "import_judge_labels", str(path), "--collection", "demo", "--judge",
        "flipper", "--model", "rule-of-five", "--date", "2024-07-01",
    )  # fmt: skip
    assert "labels into 'flipper'" in out
    assert f"{len(BEYOND)} labels name documents the collection does not hold" in out
    judge = Judge.objects.get(name="flipper")
    assert (judge.model, str(judge.date)) == ("rule-of-five", "2024-07-01")

    report = tmp_path / "audit.json"
    text = _call(
        "audit_judges", "--collection", "demo", "--judge", "flipper", "--json",
        str(report),
    )  # fmt: skip
    assert "people's sample demo-statap15, relevant at grade >= 1" in text
    assert "judge flipper (grade; the judge's relevant from 1;" in text
    data = json.loads(report.read_text())
    (entry,) = data["judges"]
    kappa = entry["kappa"]
    assert kappa["low"] <= kappa["value"] <= kappa["high"]
    assert f"judge's kappa     {kappa['value']:.3f} [{kappa['low']:.3f}," in text
    assert entry["labels_beyond_pool"] == len(BEYOND)
    assert entry["judge_count"] > 0
    assert {row["judge_grade"] for row in entry["p_relevant_by_grade"]} <= {0, 1, 2}


def test_a_bad_line_ends_the_command_with_file_and_line_and_saves_nothing(
    world, tmp_path
):
    path = tmp_path / "bad.qrels"
    path.write_text("1 0 demo-001 2\n1 0 demo-002 two\n")
    with pytest.raises(CommandError, match=r"bad.qrels:2: grade is not an integer"):
        _call("import_judge_labels", str(path), "--collection", "demo", "--judge", "x")
    assert not JudgeLabel.objects.exists()


def test_reimporting_an_audited_judge_is_refused_with_the_way_out(world, tmp_path):
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    _call("import_judge_labels", str(path), "--collection", "demo", "--judge", "j")
    _call("audit_judges", "--collection", "demo")
    with pytest.raises(CommandError, match="import the file as a judge of another"):
        _call("import_judge_labels", str(path), "--collection", "demo", "--judge", "j")
    with pytest.raises(CommandError, match="has no judge named 'nobody'"):
        _call("audit_judges", "--collection", "demo", "--judge", "nobody")
