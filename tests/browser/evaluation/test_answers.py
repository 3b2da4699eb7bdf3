"""Answers in real headless Chromium: a researcher opens Evaluate answers from the
Evaluate runs page, uploads generated answers of two systems to two TREC RAG 2025
topics, and reads each system's nugget recall with its interval in the table."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.chrome import login, screenshot, wait_for
from tests.integration.evaluation.answers_world import (
    SYSTEMS,
    answers_world,
    expected_recall,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_researcher_uploads_answers_and_reads_the_systems(
    driver, live_server, researcher, shared_data, tmp_path
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    collection, answers, nuggets = answers_world(shared_data, tmp_path)
    login(driver, live_server.url, researcher.username)
    driver.get(
        f"{live_server.url}{reverse('evaluation-page', args=[collection.pk, 'runs'])}"
    )
    wait_for(
        lambda: driver.find_element(By.LINK_TEXT, "Evaluate answers"), "nav"
    ).click()
    upload = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, "input[type=file]"), "the form"
    )
    upload.send_keys(str(answers))
    Select(driver.find_element(By.ID, "id_bank")).select_by_visible_text("Bank rag25")
    threshold = driver.find_element(By.ID, "id_threshold")
    threshold.clear()
    threshold.send_keys("1")
    driver.find_element(By.CSS_SELECTOR, "#answers-form button[type=submit]").click()
    table = wait_for(lambda: driver.find_element(By.ID, "answers-systems"), "table")
    screenshot(driver, "answers-systems")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.find_element(By.TAG_NAME, "th").text for r in rows] == ["four", "two"]
    for row in rows:
        system = row.find_element(By.TAG_NAME, "th").text
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        recall, weighted = expected_recall(nuggets, SYSTEMS[system])
        assert cells[0] == "2"
        assert cells[2] == f"{recall:.4f}"
        assert cells[4] == f"{weighted:.4f}"
        low, high = (float(x) for x in cells[3].strip("[]").split(", "))
        assert low <= recall <= high
    answer = driver.find_element(By.CSS_SELECTOR, "details.answer summary")
    answer.click()
    assert driver.find_elements(By.CSS_SELECTOR, "details.answer[open] mark")
