"""A top-up over a document that is also a known answer, in real headless Chromium.

The assessor judges a known answer interleaved in her queue (a check); a new run
retrieves that document outside the pool and staff draw a top-up from the run's page.
The top-up's queue shows the document unjudged, her label of it leaves the check as
it was, and once the top-up is judged the run's page corrects every topic of it.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.evaluation.services import new_runs
from nuggets_app.judging.services.known_answers import known_answers_interleave
from nuggets_app.models import (
    Assignment,
    Judgment,
    KnownAnswer,
    PoolDocument,
    Sample,
    SampleDocument,
)
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.integration.evaluation.test_new_runs import MISSING, new_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NAME = "browser-checked"


def _checked_run(world):
    """The usual new run, except that on its first topic its only document outside
    the pool is one document, first: the top-up is sure to draw it. Returns the run,
    the topic and the document."""
    run = new_run(world)
    qid = sorted(run)[0]
    topic = world.topics[qid]
    pooled = set(
        PoolDocument.objects.filter(pool=world.pool, topic=topic).values_list(
            "document__docno", flat=True
        )
    )
    ranked = sorted(run[qid], key=lambda d: -run[qid][d])
    outside = next(d for d in ranked if d not in pooled and d != MISSING)
    inside = [d for d in ranked if d in pooled]
    run[qid] = {d: float(100 - i) for i, d in enumerate([outside, *inside])}
    return run, topic, world.collection.documents.get(docno=outside)


def _grade(driver, By, grade: int) -> None:
    driver.find_element(By.CSS_SELECTOR, f"button.grade[data-grade='{grade}']").click()


def _pressed(driver, By) -> list[str]:
    return [
        b.get_attribute("data-grade")
        for b in driver.find_elements(By.CSS_SELECTOR, "button.grade")
        if b.get_attribute("aria-pressed") == "true"
    ]


def test_a_top_up_over_a_checked_known_answer_corrects_every_topic(
    driver, live_server, fitted_world, staff, assessor
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    for topic in world.topics.values():
        Assignment.objects.get_or_create(
            sample=world.sample, topic=topic, assessor=assessor
        )
    run, topic, document = _checked_run(world)
    truth = int(world.file_qrels.get(topic.qid, {}).get(document.docno, 0) >= 1)
    KnownAnswer.objects.create(
        topic=topic, document=document, relevance=truth, source="qrels:cranfield"
    )
    assert known_answers_interleave(sample=world.sample, rate=0.1).added == {
        topic.qid: 1
    }
    # The assessor judges the check in her queue, and misses it.
    item = SampleDocument.queue.get(sample=world.sample, topic=topic, document=document)
    assert item.known
    login(driver, live_server.url, assessor.username)
    first = Assignment.objects.get(sample=world.sample, topic=topic, assessor=assessor)
    open_page(driver, live_server.url + reverse("judge", args=[first.pk, item.order]))
    _grade(driver, By, 1 - truth)
    check = wait_for(
        lambda: Judgment.objects.filter(
            topic=topic, document=document, assessor=assessor, quality_check=True
        ).first(),
        "the check",
    )
    assert check.relevance == 1 - truth

    # Staff keep the new run and draw a top-up from its page.
    kept = new_runs.new_run_keep(
        job=world.job, sample=world.sample, name=NAME, scores=run
    )
    new_runs.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NAME: run}, inline_max=10**6
    )
    page = (
        f"{live_server.url}{reverse('job-new-run-kept', args=[world.job.pk, kept.pk])}"
    )
    login(driver, live_server.url, staff.username)
    driver.get(page)
    form = wait_for(lambda: driver.find_element(By.ID, "top-up-form"), "the form")
    size = form.find_element(By.NAME, "size")
    size.clear()
    size.send_keys("5")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(lambda: driver.find_element(By.ID, "table-top-ups"), "the top-up")
    # Before any label, the page names the documents each topic waits for.
    waiting = driver.find_element(By.CSS_SELECTOR, "#table-top-ups td.waiting")
    assert f"topic {topic.qid}: {document.docno}" in waiting.text
    sample = Sample.objects.get(new_run=kept, method=Sample.Method.TOP_UP)
    rows = sorted(
        SampleDocument.queue.filter(sample=sample).select_related("topic", "document"),
        key=lambda r: (r.topic.qid, r.order),
    )
    assert (topic.pk, document.pk) in {(r.topic_id, r.document_id) for r in rows}
    topics = {r.topic_id for r in rows}

    # The assessor judges the top-up on the judging page, from the truth.
    login(driver, live_server.url, assessor.username)
    for row in rows:
        assignment = Assignment.objects.get(
            sample=sample, topic=row.topic, assessor=assessor
        )
        open_page(
            driver, live_server.url + reverse("judge", args=[assignment.pk, row.order])
        )
        label = Judgment.objects.filter(
            topic=row.topic, document=row.document, assessor=assessor,
            quality_check=False,
        )  # fmt: skip
        if row.document_id == document.pk:
            # Her check is not the top-up's label: the document waits for a grade.
            assert _pressed(driver, By) == []
            screenshot(driver, "top-up-over-a-check")
        grade = int(
            world.file_qrels.get(row.topic.qid, {}).get(row.document.docno, 0) >= 1
        )
        _grade(driver, By, grade)
        wait_for(lambda label=label: label.exists(), "the label")
    check.refresh_from_db()
    assert (check.relevance, check.quality_check, check.version) == (
        1 - truth,
        True,
        1,
    )
    label = Judgment.objects.get(
        topic=topic, document=document, assessor=assessor, quality_check=False
    )
    assert label.relevance == truth

    # The run's page uses the whole top-up: every topic corrected.
    login(driver, live_server.url, staff.username)
    driver.get(page)
    used = wait_for(lambda: driver.find_element(By.ID, "top-up-used"), "top-up used")
    assert f"corrects {len(topics)} topic" in used.text
    assert topic.qid in used.text
    judged = driver.find_element(By.CSS_SELECTOR, "#table-top-ups td.judged")
    assert judged.text == str(len(rows))
    waiting = driver.find_element(By.CSS_SELECTOR, "#table-top-ups td.waiting")
    assert waiting.text == "\u2013"  # nothing waits
    text = driver.find_element(By.TAG_NAME, "body").text
    assert f"{len(topics)} of {len(topics)}" in text
    assert "judge a top-up sample of them before trusting it" not in text
    driver.execute_script(
        "arguments[0].scrollIntoView()", driver.find_element(By.ID, "table-top-ups")
    )
    screenshot(driver, "top-up-over-a-check-judged")
