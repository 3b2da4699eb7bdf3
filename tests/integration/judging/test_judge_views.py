"""The judging page and its judgment / time endpoints, through the Django test client."""

import json
import re

import pytest
from django.test import Client
from django.urls import reverse

from assessor_ui.views.judge import nugget_json
from nuggets_app.inference.services.embeddings import semantic_on
from nuggets_app.models import Judgment, Nugget
from tests import factories as f
from tests.integration.worlds.judging import build_world


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def judge_url(world, docno="184"):
    return reverse("judge", args=[world.assignment.pk, world.position(docno)])


def _config(response):
    raw = re.search(
        r'<script id="judge-config" type="application/json">(.*?)</script>',
        response.content.decode(),
        re.S,
    )
    return json.loads(raw.group(1))


def test_the_page_shows_topic_document_grades_and_the_keymap(world, assessor_client):
    response = assessor_client.get(judge_url(world))
    html = response.content.decode()
    doc = world.docs["184"]
    assert response.status_code == 200
    assert world.topic.title in html
    assert 'Document <strong id="docno">184</strong>' in html
    for label in ("Non-relevant", "Relevant", "Highly relevant"):
        assert label in html
    config = _config(response)
    assert config["keymap"][0] == {
        "keys": ["0"],
        "action": "grade:0",
        "label": "Non-relevant",
    }
    # The help overlay lists every key of the same table the script receives.
    overlay = html[html.index('id="help"') :]
    for entry in config["keymap"]:
        assert f'data-action="{entry["action"]}"' in overlay
    # The segments hold the exact canonical text, with their start offsets.
    segments = re.findall(
        r'<span class="seg[^"]*" data-o="(\d+)"[^>]*>([^<]*)</span>', html
    )
    assert segments[0][0] == "0"
    assert "".join(t for _, t in segments) == doc.text.replace("'", "&#x27;")


def test_other_assessor_gets_404_on_the_page_and_every_post(
    world, client, other_assessor
):
    client.force_login(other_assessor)
    a, pos = world.assignment.pk, world.position("184")
    assert client.get(judge_url(world)).status_code == 404
    assert client.get(reverse("judge-continue", args=[a])).status_code == 404
    assert (
        client.get(reverse("nugget-preview", args=[a]), {"text": "x"}).status_code
        == 404
    )
    for name in ("judgment-save", "time-save", "nugget-create"):
        response = client.post(
            reverse(name, args=[a, pos]), {"relevance": 1, "seconds": 1}
        )
        assert response.status_code == 404, name
        assert response["Content-Type"] == "application/json", name
        assert set(response.json()) == {"error", "field"}, name
    assert not Judgment.objects.exists()


def test_json_endpoints_refuse_a_wrong_method_in_json(world, assessor_client):
    url = reverse("judgment-save", args=[world.assignment.pk, 1])
    response = assessor_client.get(url)
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert "POST" in response.json()["error"]


def test_a_position_outside_the_queue_is_404(world, assessor_client):
    assert (
        assessor_client.get(
            reverse("judge", args=[world.assignment.pk, 99])
        ).status_code
        == 404
    )


def test_anonymous_users_are_sent_to_login_and_json_endpoints_answer_401(world, client):
    response = client.get(judge_url(world))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    url = reverse("judgment-save", args=[world.assignment.pk, 1])
    response = client.post(url, {"relevance": 1})
    assert response.status_code == 401
    assert "log in again" in response.json()["error"]


def test_staff_read_others_work_but_cannot_write_into_it(world, staff_client):
    response = staff_client.get(judge_url(world))
    assert response.status_code == 200
    assert _config(response)["readonly"] is True
    url = reverse("judgment-save", args=[world.assignment.pk, world.position("184")])
    assert staff_client.post(url, {"relevance": 1}).status_code == 404


def test_a_judgment_and_heartbeats_are_saved(world, assessor_client, assessor):
    a, pos = world.assignment.pk, world.position("29")
    response = assessor_client.post(
        reverse("judgment-save", args=[a, pos]), {"relevance": 2, "seconds": "7.5"}
    )
    assert response.json() == {"relevance": 2, "active_seconds": 7.5, "version": 1}
    response = assessor_client.post(
        reverse("time-save", args=[a, pos]), {"seconds": "2.5"}
    )
    assert response.json() == {"active_seconds": 10.0}
    row = Judgment.objects.get(assessor=assessor)
    assert (row.document.docno, row.relevance, row.active_seconds) == ("29", 2, 10.0)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"relevance": 5}, "relevance"),
        ({"relevance": "high"}, "relevance"),
        ({"relevance": 1, "seconds": -3}, "seconds"),
        ({"relevance": 1, "seconds": 100000}, "seconds"),
    ],
)
def test_bad_judgments_are_refused_with_the_field_named(
    world, assessor_client, data, field
):
    url = reverse("judgment-save", args=[world.assignment.pk, 1])
    response = assessor_client.post(url, data)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not Judgment.objects.exists()


def test_csrf_is_enforced_on_every_state_change(world, assessor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(assessor)
    a, pos = world.assignment.pk, 1
    nugget = f.NuggetFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor
    )
    urls = [
        reverse("judgment-save", args=[a, pos]),
        reverse("time-save", args=[a, pos]),
        reverse("nugget-create", args=[a, pos]),
        reverse("nugget-edit", args=[nugget.pk]),
        reverse("nugget-delete", args=[nugget.pk]),
    ]
    for url in urls:
        assert (
            client.post(url, {"relevance": 1, "seconds": 1, "version": 1}).status_code
            == 403
        )
    assert not Judgment.objects.exists()
    # With the token from the cookie, the same request goes through.
    client.get(judge_url(world))
    token = client.cookies["csrftoken"].value
    response = client.post(urls[0], {"relevance": 1}, headers={"X-CSRFToken": token})
    assert response.status_code == 200


def test_continue_goes_to_the_first_document_not_yet_judged(
    world, assessor_client, assessor
):
    for docno in ("184", "29"):
        f.JudgmentFactory(
            topic=world.topic,
            document=world.docs[docno],
            assessor=assessor,
            relevance=1,
        )
    response = assessor_client.get(
        reverse("judge-continue", args=[world.assignment.pk])
    )
    assert response["Location"] == judge_url(world, "31")


def test_xss_payloads_are_escaped_and_the_html_view_is_sanitized(
    world, assessor_client
):
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    doc = world.docs["184"]
    doc.text = f"Before {payload} after.\r\nNext line."
    doc.title = payload
    doc.html = f'<p>Hello</p>{payload}<a href="javascript:alert(3)">x</a>'
    doc.save()
    world.topic.title = payload
    world.topic.save()
    f.NuggetFactory(
        topic=world.topic, document=doc, assessor=world.assignment.assessor,
        start=0, end=6, text=payload, keywords=[payload],
    )  # fmt: skip
    response = assessor_client.get(judge_url(world))
    html = response.content.decode()
    assert "<script>alert" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    srcdoc = re.search(r'srcdoc="([^"]*)"', html).group(1)
    assert "script" not in srcdoc
    assert "javascript" not in srcdoc
    assert "onerror" not in srcdoc
    assert "&lt;p&gt;Hello&lt;/p&gt;" in srcdoc
    # The CR is kept as an empty marker segment carrying its code, not as raw text.
    assert 'class="seg inv" data-o="' in html
    assert 'data-c="13"' in html
    # CSP is enforced with a nonce on the page script.
    csp = response["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in csp
    assert "unsafe-inline" not in csp


def test_the_page_runs_a_constant_number_of_queries(
    world, assessor_client, assessor, other_assessor, django_assert_max_num_queries
):
    doc = world.docs["184"]
    url = judge_url(world)
    # One nugget first: with the semantic extra, one query reads which of the topic's
    # nuggets are embedded, whatever their number (none when there is no nugget).
    f.NuggetFactory(
        topic=world.topic, document=doc, assessor=assessor, start=100, end=120,
        text=doc.text[100:160],
    )  # fmt: skip
    with django_assert_max_num_queries(12) as few:
        assessor_client.get(url)
    for i in range(60):
        f.NuggetFactory(
            topic=world.topic, document=doc, assessor=assessor if i % 2 else other_assessor,
            start=i, end=i + 20, text=doc.text[i : i + 60],
        )  # fmt: skip
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = assessor_client.get(url)
    assert len(_config(response)["keymap"]) > 3
    assert response.content.decode().count('data-n="') >= 59


def test_the_data_endpoint_answers_one_position_as_json(world, assessor_client):
    doc = world.docs["29"]
    doc.html = '<p>Hello</p><script>alert(1)</script><img src=x onerror="alert(2)">'
    doc.save()
    url = reverse("judge-data", args=[world.assignment.pk, world.position("29")])
    data = assessor_client.get(url).json()
    assert (data["position"], data["docno"], data["relevance"]) == (2, "29", None)
    # The segments rebuild the canonical text exactly; the page puts them in as text.
    assert "".join(s[1] for s in data["segments"]) == doc.text
    assert data["segments"][0][0] == 0
    assert "<p>Hello</p>" in data["html"]
    assert "script" not in data["html"]
    assert "onerror" not in data["html"]
    # Topic terms are offsets of the document's words that match the topic's words.
    for start, end in data["terms"]:
        assert doc.text[start:end].isalnum()


def test_the_data_endpoint_is_refused_to_another_assessor_in_json(
    world, client, other_assessor
):
    client.force_login(other_assessor)
    url = reverse("judge-data", args=[world.assignment.pk, 1])
    response = client.get(url)
    assert response.status_code == 404
    assert set(response.json()) == {"error", "field"}


def test_the_data_endpoint_runs_a_constant_number_of_queries(
    world, assessor_client, assessor, other_assessor, django_assert_max_num_queries
):
    doc = world.docs["184"]
    url = reverse("judge-data", args=[world.assignment.pk, world.position("184")])
    f.NuggetFactory(
        topic=world.topic, document=world.docs["29"], assessor=assessor, start=100,
        end=120, text=doc.text[100:160],
    )  # fmt: skip
    # User, assignment, queue item, the queue with judgments, nuggets (the session
    # comes from the cache); with the semantic extra, the document's stored windows
    # and which of the nuggets' texts are embedded.
    with django_assert_max_num_queries(5 + 2 * semantic_on()) as few:
        assessor_client.get(url)
    for i in range(60):
        f.NuggetFactory(
            topic=world.topic, document=doc if i % 3 else world.docs["29"],
            assessor=assessor if i % 2 else other_assessor,
            start=i, end=i + 20, text=doc.text[i : i + 60],
            keywords=["flow", f"k{i}"] if i % 5 == 0 else [],
        )  # fmt: skip
    with django_assert_max_num_queries(len(few.captured_queries)):
        data = assessor_client.get(url).json()
    assert len(data["nuggets"]) == 61
    # Nuggets of other documents carry only what the topic list shows.
    others = [n for n in data["nuggets"] if n["document"] != doc.pk]
    assert others
    assert all("span_text" not in n for n in others)
    # This document's nuggets, read as plain rows, are exactly what the model gives.
    own = [n for n in data["nuggets"] if n["document"] == doc.pk]
    assert len(own) == 40
    assert any(n["keywords"] for n in own)
    for row in own:
        stored = Nugget.objects.get(pk=row["id"])
        # No embedding stored: no semantic evidence (its own tests store some), and
        # with the extra each nugget's embedding is pending.
        assert row == {
            **nugget_json(stored, assessor, row["score"]),
            "semantic": None,
            "semantic_pending": semantic_on(),
        }


def test_saves_run_a_fixed_small_number_of_queries(
    world, assessor_client, django_assert_num_queries
):
    a, pos = world.assignment.pk, world.position("29")
    # The session comes from the cache; then user, assignment, queue item (without
    # the text), one upsert that creates (and locks) the row, the grade's update and
    # its history, in a transaction (a savepoint and its release inside the test's).
    # The assignment and queue item just read prove the assignment: not asked again.
    with django_assert_num_queries(8):
        response = assessor_client.post(
            reverse("judgment-save", args=[a, pos]), {"relevance": 1, "seconds": 2}
        )
    assert response.status_code == 200
    assert response.json() == {"relevance": 1, "active_seconds": 2.0, "version": 1}
    # An existing row: the same upsert adds the time and answers the new total.
    with django_assert_num_queries(4):
        response = assessor_client.post(
            reverse("time-save", args=[a, pos]), {"seconds": 2}
        )
    assert response.json() == {"active_seconds": 4.0}
