"""``evaluate_answers`` and the answers page on real TREC RAG 2025 nuggets: every
stated nugget is found where the answer states it, the recall of each system is the
share of the nuggets it states, the intervals hold the mean, and bad input names its
line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.evaluation.services.answers import answers_evaluate
from nuggets_app.learning import embeddings
from nuggets_app.models import Nugget
from tests.integration.evaluation.answers_world import (
    QIDS,
    SYSTEMS,
    answers_world,
    expected_recall,
    stated,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, tmp_path):
    return answers_world(shared_data, tmp_path)


def test_each_system_recalls_the_nuggets_it_states(world, tmp_path):
    _, answers, nuggets = world
    out, err = io.StringIO(), io.StringIO()
    details = tmp_path / "details.jsonl"
    call_command(
        "evaluate_answers", str(answers), "--collection", "rag", "--details",
        str(details), "--threshold", "1", stdout=out, stderr=err,
    )  # fmt: skip
    assert "95% Wilson interval over those topics as clusters" in err.getvalue()
    header, *rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert header[:4] == ["run_id", "topics", "answered", "recall"]
    table = {r[0]: [float(x) for x in r[1:]] for r in rows}
    assert [r[0] for r in rows] == ["four", "two"]
    for system, count in SYSTEMS.items():
        topics, answered, recall, low, high, weighted, wlow, whigh = table[system]
        assert (topics, answered) == (2, 2)
        assert (recall, weighted) == pytest.approx(expected_recall(nuggets, count))
        # Two topics: an interval inside [0, 1], never a point.
        assert 0 <= low < recall < high <= 1
        assert 0 <= wlow < weighted < whigh <= 1
    for row in map(json.loads, details.read_text().splitlines()):
        count = SYSTEMS[row["run_id"]]
        said = [n["text"] for n in stated(nuggets, row["qid"], count)]
        found = [n["text"] for n in row["nuggets"] if n["contained"]]
        assert sorted(found) == sorted(said)
        answer = next(
            json.loads(x)
            for x in answers.read_text().splitlines()
            if json.loads(x)["run_id"] == row["run_id"]
            and json.loads(x)["qid"] == row["qid"]
        )
        for n in row["nuggets"]:
            for (a, b), text in zip(n["spans"], n["matched"], strict=True):
                assert answer["text"][a:b] == text
                assert text.lower() in n["text"].lower()


def test_bad_answers_name_their_line(world, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"run_id": "a", "qid": "58", "text": "x"}\n'
        '{"run_id": "a", "qid": "999", "text": "y"}\n'
    )
    with pytest.raises(CommandError, match=r"bad\.jsonl:2: unknown topic"):
        call_command("evaluate_answers", str(bad), "--collection", "rag")
    bad.write_text(
        '{"run_id": "a", "qid": "58", "text": "x"}\n'
        '{"run_id": "a", "qid": "58", "text": "y"}\n'
    )
    with pytest.raises(CommandError, match="answers topic 58 twice"):
        call_command("evaluate_answers", str(bad), "--collection", "rag")
    bad.write_text('{"run_id": "a", "qid": "58"}\n')
    with pytest.raises(CommandError, match="field 'text' is missing"):
        call_command("evaluate_answers", str(bad), "--collection", "rag")


def test_a_nugget_the_matcher_refuses_is_a_sentence_on_the_command_and_the_page(
    world, client, staff
):
    # Keywords are free JSON in the database; the matcher takes only strings.
    collection, answers, _ = world
    nugget = Nugget.objects.filter(topic__collection=collection).order_by("pk").first()
    Nugget.objects.filter(pk=nugget.pk).update(keywords=[7])
    refused = f"nugget {nugget.pk}: keywords must be a list of strings"
    with pytest.raises(CommandError, match=refused):
        call_command("evaluate_answers", str(answers), "--collection", "rag")
    client.force_login(staff)
    with answers.open("rb") as fh:
        page = client.post(
            f"/evaluation/{collection.pk}/answers/",
            {"answers": fh, "threshold": "1", "bank": ""},
        )
    assert page.status_code == 400
    assert refused in page.text


def test_the_page_evaluates_an_upload(world, client, staff, assessor):
    collection, answers, nuggets = world
    client.force_login(staff)
    url = f"/evaluation/{collection.pk}/answers/"
    assert "Evaluate answers" in client.get(url).text
    with answers.open("rb") as fh:
        page = client.post(url, {"answers": fh, "threshold": "1", "bank": ""})
    assert page.status_code == 200
    text = page.text
    recall, _ = expected_recall(nuggets, SYSTEMS["four"])
    assert f"{recall:.4f}" in text
    assert 'id="answers-systems"' in text
    assert len(QIDS) == int(
        text.split('data-run="two"')[1].split('<td class="num">')[1].split("<")[0]
    )
    client.force_login(assessor)
    assert client.get(url).status_code == 403


@pytest.mark.skipif(not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE)
def test_with_the_extra_each_nugget_gets_the_answers_nearest_sentence(world):
    collection, answers, _ = world
    result = answers_evaluate(collection=collection, path=answers, threshold=1.0)
    assert result.semantic
    for answer in result.answers:
        for row in answer.rows():
            a, b = row["semantic"]["span"]
            assert 0 <= a < b <= len(answer.answer.text)
            assert 0.0 <= row["semantic"]["similarity"] <= 1.0001
            if row["contained"]:
                # The sentence stating the nugget is the nearest one to it.
                assert row["text"].rstrip(".").lower() in (
                    answer.answer.text[a:b].lower()
                )
