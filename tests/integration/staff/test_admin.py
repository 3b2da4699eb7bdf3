"""The Django admin shows human work and statistical rows but never writes them (the
services are their one write path); the rows stored results are computed from are
shown only once a result uses them; a refusal is an admin page with a message, never
a bare 403; model names read as English.

The walk: after a job was fitted and its sample judged, a superuser tries to add,
change and delete a row of every model the admin registers; the job's figures, every
export with its provenance and the nugget highlights stay byte-identical."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse

from assessor_ui.views.jobs import text_segments
from nuggets_app import models as m
from nuggets_app.evaluation.services import estimates, new_runs
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.export_kinds import (
    EXPORT_KINDS,
    ExportRequest,
    export_make,
)
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.inference.services.matching import result_spans
from nuggets_app.inference.services.rule_estimates import rule_estimate
from tests import factories as f
from tests.integration.worlds.demo import JUDGED_NON_RELEVANT, demo_world
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db

READ_ONLY = [
    m.Judgment, m.Nugget, m.WorkChange, m.Assignment, m.Sample, m.SampleDocument,
    m.PoolDocument, m.MatchResult, m.MatchChunk, m.Qrels, m.QrelsEntry,
    m.Adjudication, m.Guidelines, m.KnownAnswer, m.JudgeLabel,
]  # fmt: skip


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _url(model, view: str, *args) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda model: model.__name__)
def test_the_admin_refuses_to_add_change_or_delete_a_read_only_model(
    model, staff_client, rf, staff
):
    # The add page answers with the admin's own list and a message, not a 403.
    page = staff_client.get(_url(model, "add"), follow=True)
    assert page.status_code == 200
    assert page.redirect_chain == [(_url(model, "changelist"), 302)]
    assert "Not added: " in page.text
    assert "Researcher pages" not in page.text
    assert staff_client.get(_url(model, "changelist")).status_code == 200
    request = rf.get("/")
    request.user = staff
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_a_posted_judgment_nugget_or_inclusion_probability_edit_changes_nothing(
    world, assessor, staff_client
):
    judgment = f.JudgmentFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor, relevance=1
    )
    nugget = f.NuggetFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor
    )
    item = world.assignment.sample.documents.first()
    prob = item.inclusion_prob
    posts = [
        (m.Judgment, judgment.pk, {"relevance": 7}),
        (m.Nugget, nugget.pk, {"text": "edited in the admin"}),
        (m.SampleDocument, item.pk, {"inclusion_prob": 0.001}),
    ]
    for model, pk, data in posts:
        # The change page is a view-only page; a posted form or deletion is refused
        # with a message on that page.
        page = staff_client.get(_url(model, "change", pk))
        assert page.status_code == 200
        assert "Save" not in page.text
        for view, posted in (("change", data), ("delete", {"post": "yes"})):
            refused = staff_client.post(_url(model, view, pk), posted, follow=True)
            assert refused.redirect_chain == [(_url(model, "change", pk), 302)]
            assert "Not changed: " in refused.text or "Not deleted: " in refused.text
    judgment.refresh_from_db()
    nugget.refresh_from_db()
    item.refresh_from_db()
    assert (judgment.relevance, nugget.version, item.inclusion_prob) == (1, 1, prob)
    assert nugget.text != "edited in the admin"


def test_the_admin_index_says_run_entries(staff_client):
    page = staff_client.get(reverse("admin:index"))
    assert "Run entries" in page.text
    assert "entrys" not in page.text


# --- the walk ---------------------------------------------------------------------------
@pytest.fixture
def fitted(monkeypatch):
    return demo_world(monkeypatch)


def _stored_results(fitted) -> dict[str, str]:
    """Everything a user reads of the job, as text: its figures (p, the default and
    a paper rule's estimates on the judged sample, every pooled run's model-assisted
    estimate), every export kind with its provenance, and each nugget's highlight and
    the job's matched spans in its document."""
    job, sample = m.MatchJob.objects.get(pk=fitted.job.pk), fitted.sample
    out: dict[str, str] = {}
    probs = job_probabilities(job=job)
    out["p"] = repr(sorted((t, d.tolist(), p.tolist()) for t, (d, p) in probs.items()))
    for rule in (None, DecisionRule(kind="threshold", threshold=0.3)):
        found = rule_estimate(job=job, rule=rule or DecisionRule(kind="probability"))
        out[f"estimate {rule}"] = repr(sorted(found.items()))
    runs = estimates.job_sample_estimates(
        job=job, sample=sample, runs=new_runs.job_pool_runs(job)
    )
    out["runs"] = repr(sorted(runs.items()))
    for kind in EXPORT_KINDS:
        export = export_make(
            ExportRequest(
                kind=kind,
                collection=job.collection,
                job=job,
                sample=sample if kind == "prels" else None,
                topics=job.topics.all(),
            )
        )
        out[kind] = export.text() + export.sidecar()
    for nugget in m.Nugget.objects.order_by("pk").select_related("document"):
        text = nugget.document.text
        out[f"nugget {nugget.pk}"] = repr(
            (
                nugget.start,
                nugget.end,
                nugget.span_text,
                text[nugget.start : nugget.end],
            )
        )
        result = m.MatchResult.objects.get(
            job=job, topic=nugget.topic, document=nugget.document
        )
        spans = result.spans or result_spans(result)
        out[f"spans {nugget.pk}"] = repr(text_segments(text, spans))
    return out


def _encoded(name: str, value, field: forms.Field) -> dict[str, object]:
    """A form field's value as a browser would post it."""
    if isinstance(field.widget, forms.SplitDateTimeWidget):
        parts = field.widget.decompress(value)
        return {f"{name}_{i}": "" if p is None else str(p) for i, p in enumerate(parts)}
    if value is None:
        return {name: ""}
    if isinstance(value, bool):
        return {name: "on"} if value else {}
    if isinstance(value, list | tuple):
        return {name: [str(v) for v in value]}
    if isinstance(value, dt.datetime | dt.date):
        return {name: value.isoformat()}
    return {name: str(value)}


def _edited(value, field: forms.Field):
    """A changed value of the field's kind: text gets a prefix, numbers grow."""
    if isinstance(field, forms.ChoiceField | forms.ModelChoiceField):
        return value
    if isinstance(field, forms.IntegerField | forms.FloatField) and value not in (
        None,
        "",
    ):
        return str(
            float(value) + 1 if isinstance(field, forms.FloatField) else int(value) + 1
        )
    if isinstance(field, forms.JSONField):
        return json.dumps({"edited": True})
    if isinstance(field, forms.CharField) and isinstance(value, str):
        return f"edited-{value}"
    return value


def _tampered(model) -> dict[str, str]:
    """What a hand-made POST sends for every column, whatever the form shows."""
    out: dict[str, str] = {}
    for field in model._meta.concrete_fields:
        if field.primary_key or field.is_relation:
            continue
        if field.get_internal_type() in ("TextField", "CharField", "SlugField"):
            out[field.name] = "INSERTED BY ADMIN AT THE START"
        elif "Integer" in field.get_internal_type() or "Float" in (
            field.get_internal_type()
        ):
            out[field.name] = "7"
    return out


def _change_data(model_admin, request, obj) -> dict[str, object]:
    data: dict[str, object] = _tampered(type(obj))
    form = model_admin.get_form(request, obj, change=True)(instance=obj)
    for name, field in form.fields.items():
        if field.disabled:
            continue
        value = form[name].value()
        data.update(_encoded(name, _edited(value, field), field))
    for formset, _ in model_admin.get_formsets_with_inlines(request, obj):
        management = formset.management_form
        for name in management.fields:
            data[f"{formset.prefix}-{name}"] = management[name].value()
    return data


def _rows(model, fitted) -> list:
    """The rows tried: the first, and those a stored result is most directly
    computed from (the judged documents, the job, its pool, topic 1, an assessor)."""
    rows = list(model._default_manager.order_by("pk")[:1])
    if model is m.Document:
        rows += [
            fitted.nugget.document,
            m.Document.objects.get(docno=JUDGED_NON_RELEVANT),
        ]
    if model is m.Topic:
        rows.append(fitted.nugget.topic)
    if model is get_user_model():
        rows.append(fitted.nugget.assessor)
    if model is m.RunEntry:
        rows.append(m.RunEntry.objects.filter(document=fitted.nugget.document).first())
    return [r for r in dict.fromkeys(rows) if r is not None]


def test_every_admin_model_refuses_or_cannot_change_a_stored_result(fitted, client, rf):
    root = get_user_model().objects.create_superuser("root", password="root-pass-1")
    client.force_login(root)
    request = rf.get("/")
    request.user = root
    before = _stored_results(fitted)
    tried = []
    registry = sorted(admin.site._registry.items(), key=lambda kv: kv[0]._meta.label)
    for model, model_admin in registry:
        assert client.get(_url(model, "changelist")).status_code == 200, model
        # The admin's own page and message (a third-party app's admin: the admin's
        # refusal page), never the researcher pages' refusal.
        added = client.get(_url(model, "add"), follow=True)
        assert added.status_code in (200, 403), model
        assert "Researcher pages" not in added.text
        posted = client.post(_url(model, "add"), _tampered(model), follow=True)
        assert posted.status_code in (200, 403), model
        assert "Researcher pages" not in posted.text
        for obj in _rows(model, fitted):
            if obj == root:
                continue
            page = client.get(_url(model, "change", obj.pk))
            assert page.status_code == 200, (model, obj)
            data = _change_data(model_admin, request, obj)
            changed = client.post(_url(model, "change", obj.pk), data, follow=True)
            assert changed.status_code in (200, 403), (model, obj)
            gone = client.post(
                _url(model, "delete", obj.pk), {"post": "yes"}, follow=True
            )
            assert gone.status_code in (200, 403), (model, obj)
            for answer in (changed, gone):
                assert "Researcher pages" not in answer.text
                if answer.status_code == 403:  # never one of this project's models
                    assert model._meta.app_label != "nuggets_app"
            tried.append(model._meta.label)
    assert {
        "nuggets_app.Document", "nuggets_app.MatchJob", "nuggets_app.Pool",
        "nuggets_app.Topic", "nuggets_app.RunEntry", "nuggets_app.Judgment",
    } <= set(tried)  # fmt: skip
    after = _stored_results(fitted)
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key], key


def test_a_judged_documents_text_edit_is_refused_with_the_importers_path(
    fitted, staff_client
):
    document = fitted.nugget.document
    page = staff_client.post(
        _url(m.Document, "change", document.pk),
        {"text": f"INSERTED BY ADMIN AT THE START. {document.text}"},
        follow=True,
    )
    assert "Not changed: " in page.text
    assert "--changed-text refuse|reanchor" in page.text
    document.refresh_from_db()
    nugget = fitted.nugget
    assert document.text[nugget.start : nugget.end] == nugget.span_text


def test_a_finished_jobs_parameters_are_shown_only(fitted, staff_client):
    job = fitted.job
    page = staff_client.get(_url(m.MatchJob, "change", job.pk))
    assert "Save" not in page.text
    staff_client.post(
        _url(m.MatchJob, "change", job.pk), {"k": 7, "relevance_level_setting": 1}
    )
    job.refresh_from_db()
    assert (job.k, job.relevance_level) == (fitted.job.k, fitted.job.relevance_level)


def test_a_row_no_result_uses_stays_editable(staff_client):
    collection = f.CollectionFactory(name="fresh", description="")
    data = {"name": "fresh-two", "description": "new", "relevance_level_setting": ""}
    data["grades"] = json.dumps(collection.grades)
    page = staff_client.post(
        _url(m.Collection, "change", collection.pk), data, follow=True
    )
    assert page.status_code == 200
    collection.refresh_from_db()
    assert (collection.name, collection.description) == ("fresh-two", "new")
