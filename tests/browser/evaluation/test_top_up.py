"""A top-up in real headless Chromium: staff opens a kept new run's page, sees how much
of its interval is the model's error on its documents outside the pool, draws a
top-up sample from the page, the assessor judges it in the usual judging page, and
the run's page shows the new figure, corrected by the judgments."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.evaluation.services import new_runs
from nuggets_app.models import Assignment, Judgment, Sample, SampleDocument
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.integration.evaluation.test_new_runs import new_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NAME = "browser-top-up"


def _figure(driver, By) -> tuple[str, str]:
    table = wait_for(lambda: driver.find_element(By.ID, "table-new-runs"), "estimates")
    row = table.find_element(By.XPATH, f".//tbody/tr[th[normalize-space()='{NAME}']]")
    cells = row.find_elements(By.TAG_NAME, "td")
    return cells[1].text, cells[2].text


def test_staff_draws_a_top_up_the_assessor_judges_it_and_the_figure_changes(
    driver, live_server, fitted_world, staff, assessor
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    # The usual queues: the assessor judges every topic of the job's sample.
    for topic in world.topics.values():
        Assignment.objects.get_or_create(
            sample=world.sample, topic=topic, assessor=assessor
        )
    run = new_run(world)
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
    before = _figure(driver, By)
    parts = driver.find_element(By.ID, "table-interval-parts")
    assert float(parts.find_element(By.CSS_SELECTOR, "td.model").text) > 0
    advice = driver.find_element(By.ID, "top-up-advice").text
    assert "top-up" in advice
    assert "outside the pool" in advice
    # Six topics: a wide interval, already within a width of 0.8, to plan for.
    driver.get(f"{page}?width=0.8")
    needed = driver.find_element(By.ID, "top-up-needed").text
    assert "is already within a width of 0.80: no top-up is needed" in needed
    assert not driver.find_elements(By.ID, "top-up-advice")
    driver.get(f"{page}?width=0.4")
    needed = driver.find_element(By.ID, "top-up-needed").text
    assert "judgments per topic" in needed
    assert "width of 0.40" in needed
    form = driver.find_element(By.ID, "top-up-form")
    size = form.find_element(By.NAME, "size")
    size.clear()
    size.send_keys("5")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(lambda: driver.find_element(By.ID, "table-top-ups"), "the top-up")
    sample = Sample.objects.get(new_run=kept, method=Sample.Method.TOP_UP)
    rows = list(
        SampleDocument.objects.filter(sample=sample).select_related("topic", "document")
    )
    assert rows
    per_topic = {
        t: sum(r.topic_id == t for r in rows) for t in {r.topic_id for r in rows}
    }
    assert max(per_topic.values()) <= 5
    pooled = set(world.pool.documents.values_list("topic_id", "document_id"))
    assert not {(r.topic_id, r.document_id) for r in rows} & pooled
    judged = driver.find_element(By.CSS_SELECTOR, "#table-top-ups td.judged")
    assert judged.text == "0"
    screenshot(driver, "new-run-top-up-drawn")

    # The assessor judges the top-up on the usual judging page, from the truth.
    login(driver, live_server.url, assessor.username)
    for assignment in Assignment.objects.filter(sample=sample, assessor=assessor):
        docs = [r for r in rows if r.topic_id == assignment.topic_id]
        for position, row in enumerate(sorted(docs, key=lambda r: r.order), 1):
            open_page(
                driver,
                live_server.url + reverse("judge", args=[assignment.pk, position]),
            )
            grade = int(
                world.file_qrels.get(row.topic.qid, {}).get(row.document.docno, 0) >= 1
            )
            driver.find_element(
                By.CSS_SELECTOR, f"button.grade[data-grade='{grade}']"
            ).click()
            wait_for(
                lambda row=row: Judgment.objects.filter(
                    assessor=assessor, topic=row.topic, document=row.document
                ).exists(),
                "the judgment",
            )

    # The run's page now uses the judged top-up.
    login(driver, live_server.url, staff.username)
    driver.get(page)
    after = _figure(driver, By)
    used = wait_for(lambda: driver.find_element(By.ID, "top-up-used"), "top-up used")
    assert "corrects" in used.text
    assert after != before
    judged = driver.find_element(By.CSS_SELECTOR, "#table-top-ups td.judged")
    assert judged.text == str(len(rows))
    driver.execute_script(
        "arguments[0].scrollIntoView()", driver.find_element(By.ID, "new-run-interval")
    )
    screenshot(driver, "new-run-top-up-judged")
