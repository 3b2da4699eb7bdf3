"""The admin shows a judge read by a result and never changes its labels."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

from nuggets_app.evaluation.services.judge_audits import judge_audit_build
from nuggets_app.judges.services import judge_labels_import
from nuggets_app.models import Judge
from tests.integration.worlds.judges import judged_demo, write_judge_qrels

pytestmark = pytest.mark.django_db


def test_an_audited_judge_is_read_only_in_the_admin_but_its_notes(
    staff_client, rf, staff, tmp_path
):
    world = judged_demo()
    path = write_judge_qrels(world, tmp_path / "j.qrels")
    judge_labels_import(path=path, collection=world.collection, name="j")
    judge = Judge.objects.get(name="j")
    request = rf.get("/")
    request.user = staff
    judge_admin = admin.site._registry[Judge]
    assert judge_admin.has_delete_permission(request, judge)

    judge_audit_build(collection=world.collection)
    judge.refresh_from_db()
    assert not judge_admin.has_delete_permission(request, judge)
    assert "model" in judge_admin.get_readonly_fields(request, judge)
    assert "notes" not in judge_admin.get_readonly_fields(request, judge)
    url = reverse("admin:nuggets_app_judge_delete", args=[judge.pk])
    refused = staff_client.post(url, {"post": "yes"}, follow=True)
    assert "Not deleted: a judge whose labels an audit or a release read" in (
        refused.text
    )
    assert Judge.objects.filter(pk=judge.pk).exists()
