"""Several assessors, one answer, in headless Chromium: two assessors disagree, staff
adjudicate from the queue by keyboard and the exports follow the stated rule; the
guidelines panel opens by key and judgments record the guidelines version; a known
answer looks like any other document and the assessor's agreement with it reaches
the staff page."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from nuggets_app.judging.services.guidelines import guidelines_save
from nuggets_app.judging.services.known_answers import known_answers_interleave
from nuggets_app.models import (
    Adjudication,
    Assignment,
    Judgment,
    KnownAnswer,
    SampleDocument,
    WorkChange,
)
from tests import factories as f
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.integration.worlds.judging import build_world, cranfield_docs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
By = pytest.importorskip("selenium.webdriver.common.by").By


def press(driver, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


@pytest.fixture
def world(shared_data, assessor, other_assessor, staff):
    world = build_world(shared_data, assessor, other_assessor)
    world.extra["bob"] = Assignment.objects.create(
        sample=world.assignment.sample, topic=world.topic, assessor=other_assessor
    )
    return world


def _grade_in_browser(driver, base: str, username: str, url: str, key: str) -> None:
    login(driver, base, username)
    open_page(driver, base + url)
    press(driver, key)


def _export(tmp_path, kind: str, rule: str, *extra: str) -> tuple[dict, dict]:
    out = tmp_path / f"{kind}-{rule}{'-'.join(extra)}.qrels"
    call_command(
        "export_qrels", "--collection", "cranfield", "--kind", kind,
        "--aggregate", rule, *extra, "--output", str(out),
    )  # fmt: skip
    lines = {
        (q, d): int(rel)
        for q, _, d, rel in (line.split() for line in out.read_text().splitlines())
    }
    side = json.loads((tmp_path / (out.name + ".provenance.json")).read_text())
    return lines, side


def _job(world, monkeypatch):
    """A finished matching job over the sample (chunks run in this process)."""
    from nuggets_app.inference.services.matching import chunks, launch, match_job_launch
    from tests.integration.worlds.cranfield_pool import run_inline

    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)
    text = world.docs["184"].text
    f.NuggetFactory(
        topic=world.topic, document=world.docs["184"], assessor=world.assignment.assessor,
        start=0, end=60, text=text[:60],
    )  # fmt: skip
    job = match_job_launch(
        collection=world.collection, topics=[world.topic], source="sample",
        sample=world.assignment.sample,
    )  # fmt: skip
    return run_inline(job)


def test_staff_adjudicate_a_disagreement_by_keyboard_and_exports_follow_the_rule(
    driver, live_server, world, tmp_path, monkeypatch
):
    base = live_server.url
    alice_url = reverse("judge", args=[world.assignment.pk, world.position("184")])
    bob_url = reverse("judge", args=[world.extra["bob"].pk, world.position("184")])
    _grade_in_browser(driver, base, "alice", alice_url, "2")
    wait_for(lambda: Judgment.objects.filter(relevance=2).exists(), "alice's grade")
    _grade_in_browser(driver, base, "bob", bob_url, "0")
    wait_for(lambda: Judgment.objects.filter(relevance=0).exists(), "bob's grade")
    own = list(Judgment.objects.order_by("pk").values())
    history = list(WorkChange.objects.order_by("pk").values())

    login(driver, base, "root")
    driver.get(base + reverse("staff-adjudication", args=["cranfield"]))
    rows = driver.find_elements(By.CSS_SELECTOR, "#adjudication-queue tbody tr")
    assert [r.get_attribute("data-docno") for r in rows] == ["184"]
    driver.find_element(By.ID, "adjudicate-first").click()
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"), "page"
    )
    columns = driver.find_elements(By.CSS_SELECTOR, "#assessor-work .assessor-work")
    assert [c.get_attribute("data-assessor") for c in columns] == ["alice", "bob"]
    assert [c.find_element(By.CSS_SELECTOR, ".grade-given").text for c in columns] == [
        "2",
        "0",
    ]
    press(driver, "?")
    assert driver.find_element(By.ID, "help").is_displayed()
    press(driver, "\ue00c")  # Escape
    screenshot(driver, "adjudication-page")
    press(driver, "1")
    decision = wait_for(lambda: Adjudication.objects.first(), "the decision")
    assert (decision.relevance, decision.adjudicator.username) == (1, "root")
    # Decided, the last of the queue: back on the queue.
    wait_for(lambda: "/adjudicate/" in driver.current_url, "back to the queue")

    job = _job(world, monkeypatch)
    key = ("1", "184")
    merged = ("--job", str(job.pk), "--threshold", "0.3")
    for kind, extra in (("human", ()), ("merged", merged)):
        stated = {
            ("adjudicated",): 1,
            ("majority",): 2,  # a 2-0 tie goes to the higher grade by default
            ("majority", "--ties", "lower"): 0,
            ("highest",): 2,
        }
        for (rule, *rest), grade in stated.items():
            lines, side = _export(tmp_path, kind, rule, *extra, *rest)
            assert lines[key] == grade, (kind, rule, rest)
            assert side["aggregation"]["rule"] == rule
            assert side["kind"] == kind
    # The assessors' own judgments and their history are as they were.
    assert list(Judgment.objects.order_by("pk").values()) == own
    assert (
        list(
            WorkChange.objects.exclude(kind=WorkChange.ADJUDICATION)
            .order_by("pk")
            .values()
        )
        == history
    )


def test_the_guidelines_panel_opens_by_key_and_judgments_record_its_version(
    driver, live_server, world, staff
):
    guidelines_save(
        collection=world.collection, text="Judge the *method*, not the topic.",
        author=staff,
    )  # fmt: skip
    world.topic.narrative = "A relevant document states a similarity law."
    world.topic.save()
    base = live_server.url
    login(driver, base, "alice")
    open_page(driver, base + reverse("judge", args=[world.assignment.pk, 1]))
    panel = driver.find_element(By.ID, "guidelines")
    assert not panel.is_displayed()
    press(driver, "g")
    wait_for(lambda: panel.is_displayed(), "the guidelines panel")
    assert driver.find_element(By.ID, "guidelines-version").text == "1"
    assert panel.find_element(By.TAG_NAME, "em").text == "method"
    assert "similarity law" in driver.find_element(By.ID, "guidelines-narrative").text
    screenshot(driver, "judge-guidelines-panel")
    press(driver, "g")
    wait_for(lambda: not panel.is_displayed(), "the panel closed")
    press(driver, "1")
    wait_for(lambda: Judgment.objects.filter(relevance=1).exists(), "first grade")
    assert Judgment.objects.get(relevance=1).guidelines_version == 1

    guidelines_save(
        collection=world.collection, text="Judge the *method* and its conditions.",
        author=staff,
    )  # fmt: skip
    open_page(driver, base + reverse("judge", args=[world.assignment.pk, 2]))
    press(driver, "g")
    wait_for(
        lambda: driver.find_element(By.ID, "guidelines-version").text == "2",
        "the new version",
    )
    press(driver, "\ue00c")  # Escape closes it
    wait_for(
        lambda: not driver.find_element(By.ID, "guidelines").is_displayed(), "closed"
    )
    press(driver, "0")
    made = wait_for(
        lambda: Judgment.objects.filter(document=world.docs["29"], relevance=0).first(),
        "second grade",
    )
    assert made.guidelines_version == 2
    assert Judgment.objects.get(document=world.docs["184"]).guidelines_version == 1


def test_a_known_answer_looks_like_any_document_and_its_check_reaches_staff(
    driver, live_server, world, shared_data
):
    raw = cranfield_docs(shared_data, ["13"])["13"]
    doc = f.DocumentFactory(
        collection=world.collection, docno="13", title=raw["title"], text=raw["text"]
    )
    KnownAnswer.objects.create(
        topic=world.topic, document=doc, relevance=0, source="qrels:cranfield"
    )
    done = known_answers_interleave(sample=world.assignment.sample, rate=0.15, seed=2)
    assert done.added == {"1": 1}
    check = SampleDocument.queue.get(known=True)
    base = live_server.url
    login(driver, base, "alice")
    pages = {}
    for position in (check.order, check.order + 1):
        open_page(driver, base + reverse("judge", args=[world.assignment.pk, position]))
        ids = driver.execute_script(
            "return [...document.querySelectorAll('[id]')].map(e => e.id).sort()"
        )
        pages[position] = (ids, driver.find_element(By.ID, "doc-index").text)
        source = driver.page_source.lower()
        assert "known" not in source
        assert "quality" not in source
    assert pages[check.order][0] == pages[check.order + 1][0]
    assert pages[check.order][1] == str(check.order)
    open_page(driver, base + reverse("judge", args=[world.assignment.pk, check.order]))
    assert driver.find_element(By.ID, "docno").text == "13"
    press(driver, "2")
    made = wait_for(
        lambda: Judgment.objects.filter(document=doc, relevance=2).first(), "grade"
    )
    assert made.quality_check

    login(driver, base, "root")
    driver.get(base + reverse("staff-assessor-quality", args=["cranfield"]))
    row = driver.find_element(
        By.CSS_SELECTOR, '#assessor-quality tr[data-assessor="alice"]'
    )
    cells = row.find_elements(By.CSS_SELECTOR, "td.agreement")
    assert "0 of 1" in cells[0].text
    assert "clearly below" in row.find_element(By.CSS_SELECTOR, "td.flag").text
    screenshot(driver, "assessor-quality-page")
