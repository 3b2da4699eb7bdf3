"""The people's judgments needed for a target interval on R, with and without each
judge: on the audit page and in ``audit_judges`` (text and JSON)."""

from __future__ import annotations

import io
import json
import math

import pytest
from django.core.management import call_command
from django.urls import reverse

from nuggets_app.evaluation.services.judge_audits import judge_audit_build
from nuggets_app.evaluation.services.judge_plans import judge_plan_build
from nuggets_app.ir.judge_audit import JudgeAuditError
from tests.integration.worlds.judges import judged_demo, write_judge_qrels

pytestmark = pytest.mark.django_db

Z = 1.959963984540054


@pytest.fixture
def world(tmp_path):
    world = judged_demo()
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    call_command(
        "import_judge_labels", str(path), "--collection", "demo", "--judge",
        "flipper", stdout=io.StringIO(),
    )  # fmt: skip
    return world


def test_each_topic_needs_the_uniform_design_s_size_for_the_half_width(world):
    report = judge_audit_build(collection=world.collection)
    plan = judge_plan_build(report=report, half_width=2.0, relative=False)
    audit = report.entries[0].audit
    rows = {row.qid: row for row in plan.rows}
    checked = 0
    for topic in audit.topics:
        n, big_n = topic.uncertain_sampled, topic.uncertain
        if not (0 < n < big_n and topic.r_var_without > 0):
            continue
        # Var(n') = N^2 (1/n' - 1/N) S^2 with N^2 S^2 = V / (1/n - 1/N): solve
        # 1.96^2 Var(n') = h^2 for n'.
        scaled = topic.r_var_without / (1 / n - 1 / big_n)
        need = 1 / ((2.0 / Z) ** 2 / scaled + 1 / big_n)
        certain = topic.pool_size - topic.uncertain
        assert rows[topic.qid].without_judge == certain + min(big_n, math.ceil(need))
        checked += 1
    assert checked > 0
    assert plan.total.without_judge == sum(r.without_judge for r in plan.rows)
    assert plan.total.judged == sum(t.sampled for t in audit.topics)


def test_a_tighter_target_needs_at_least_as_many_judgments(world):
    report = judge_audit_build(collection=world.collection)
    loose = judge_plan_build(report=report, half_width=0.5)
    tight = judge_plan_build(report=report, half_width=0.1)
    for a, b in zip(loose.rows, tight.rows, strict=True):
        assert b.without_judge >= a.without_judge
        assert b.with_judges[0] >= a.with_judges[0]
    with pytest.raises(JudgeAuditError, match="half-width must be > 0"):
        judge_plan_build(report=report, half_width=0.0)


def test_audit_judges_prints_and_writes_the_plan(world, tmp_path):
    out = io.StringIO()
    report = tmp_path / "audit.json"
    call_command(
        "audit_judges", "--collection", "demo", "--half-width", "3", "--documents",
        "--json", str(report), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "for a 95% interval on R of +/- 3 relevant documents" in text
    assert "topic  judged  without judge  with flipper" in text
    plan = json.loads(report.read_text())["plan"]
    assert (plan["half_width"], plan["relative"]) == (3.0, False)
    total = plan["total"]
    assert total["needed_without_judge"] == sum(
        t["needed_without_judge"] for t in plan["topics"]
    )
    assert set(total["needed_with_judge"]) == {"flipper"}


def test_staff_set_the_target_on_the_audit_page(world, staff_client):
    url = reverse("staff-judge-audit", args=["demo"])
    page = staff_client.get(url).content.decode()
    assert "Needed with flipper" in page
    assert "+/- 20% of R" in page
    page = staff_client.get(url, {"half_width": "3", "unit": "documents"})
    assert "+/- 3 relevant documents" in page.content.decode()
    assert page.context["plan"].half_width == 3.0
