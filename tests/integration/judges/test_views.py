"""The judges' staff pages: upload, audit and a document of the audit; staff only."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from nuggets_app.models import Judge, JudgeLabel
from tests import factories as f
from tests.integration.worlds.judges import judged_demo, write_judge_qrels

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return judged_demo()


def _urls() -> list[str]:
    return [
        reverse("staff-judges", args=["demo"]),
        reverse("staff-judge-audit", args=["demo"]),
        reverse("staff-judge-document", args=["demo", "1", "demo-001"]),
    ]


def test_an_assessor_is_refused_on_every_judges_page(world, client):
    # The demo's alice judged its sample: an assessor, not staff.
    client.force_login(get_user_model().objects.get(username="alice"))
    for url in _urls():
        assert client.get(url).status_code == 403, url
        assert client.post(url, {"judge": "x"}).status_code in (403, 405), url


def _upload(client, path, judge="flipper"):
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    return client.post(
        reverse("staff-judges", args=["demo"]),
        {"file": upload, "judge": judge, "fmt": "auto", "model": "rules"},
    )


def test_staff_upload_a_judge_and_read_its_audit(world, staff_client, tmp_path):
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    response = _upload(staff_client, path)
    assert response.status_code == 302
    assert Judge.objects.get(name="flipper").model == "rules"
    page = staff_client.get(reverse("staff-judges", args=["demo"]), follow=True)
    assert "flipper.qrels: 234 labels into &#x27;flipper&#x27;" in page.content.decode()
    assert (
        '<td class="label-count">234 (2 of documents the collection does not hold)'
        in (page.content.decode())
    )

    audit = staff_client.get(reverse("staff-judge-audit", args=["demo"]))
    text = audit.content.decode()
    assert audit.status_code == 200
    assert "This judge calls" in text
    assert "The judge's kappa at grade &gt;= 1" in text
    assert 'href="/collections/demo/judges/documents/' in text


def test_a_bad_upload_names_the_line_and_saves_nothing(world, staff_client, tmp_path):
    path = tmp_path / "bad.qrels"
    path.write_text("1 0 demo-001 2\n1 0 demo-002 2\n7 0 demo-003 x\n")
    response = _upload(staff_client, path)
    assert response.status_code == 400
    text = response.content.decode()
    assert "bad.qrels:3: grade is not an integer" in text
    assert "nothing was saved" in text
    assert str(tmp_path) not in text
    assert not JudgeLabel.objects.exists()


def test_the_document_of_the_audit_is_text_with_every_label(
    world, staff_client, tmp_path
):
    _upload(staff_client, write_judge_qrels(world, tmp_path / "flipper.qrels"))
    response = staff_client.get(
        reverse("staff-judge-document", args=["demo", "1", "demo-001"])
    )
    text = response.content.decode()
    assert response.status_code == 200
    label = JudgeLabel.objects.get(topic__qid="1", docno="demo-001")
    assert f'<dd data-judge="flipper">grade {label.grade}</dd>' in text
    truth = world.truth.get("1", {}).get("demo-001")
    assert 'id="people-label"' in text
    assert truth is None or f"grade {truth}" in text or "not judged" in text
    missing = reverse("staff-judge-document", args=["demo", "1", "no-such-doc"])
    assert staff_client.get(missing).status_code == 404


def test_the_audit_says_what_is_missing(world, staff_client):
    response = staff_client.get(reverse("staff-judge-audit", args=["demo"]))
    assert "has no judge: import one first" in response.content.decode()


def test_an_upload_into_an_audited_judge_is_refused_with_the_way_out(
    world, staff_client, tmp_path
):
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    _upload(staff_client, path)
    staff_client.get(reverse("staff-judge-audit", args=["demo"]))
    page = staff_client.get(reverse("staff-judges", args=["demo"])).content.decode()
    assert "the audit against sample demo-statap15 (" in page
    assert "): read-only" in page
    response = _upload(staff_client, path)
    assert response.status_code == 400
    assert "import the file as a judge of another name (for example flipper-2)" in (
        response.content.decode()
    )
    assert _upload(staff_client, path, judge="flipper-2").status_code == 302


def test_a_documents_markup_is_shown_as_text(world, staff_client):
    f.DocumentFactory(
        collection=world.collection,
        docno="markup-1",
        title="<b>bold</b>",
        text="<script>alert(1)</script> plain words",
    )
    response = staff_client.get(
        reverse("staff-judge-document", args=["demo", "1", "markup-1"])
    )
    text = response.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; plain words" in text
    assert "<script>alert(1)" not in text
    assert "&lt;b&gt;bold&lt;/b&gt;" in text


def test_anonymous_users_are_sent_to_the_login_page(world, client):
    for url in _urls():
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url
