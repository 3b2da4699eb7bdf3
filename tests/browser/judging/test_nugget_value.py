"""What the nuggets contribute, in real headless Chromium: a researcher asks for the
measure on a finished job's relevance-model card and the card shows the model with and
without the nugget features."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.chrome import login, screenshot, wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(fitted_world):
    return fitted_world


def test_a_researcher_learns_whether_the_nuggets_pay(
    driver, live_server, world, researcher, eager_tasks
):
    from selenium.webdriver.common.by import By

    login(driver, live_server.url, researcher.username)
    driver.get(f"{live_server.url}{reverse('job-detail', args=[world.job.pk])}")
    card = wait_for(lambda: driver.find_element(By.ID, "relevance-model"), "the card")
    assert "without nuggets" not in card.text
    button = card.find_element(
        By.XPATH, ".//button[normalize-space()='Measure what the nuggets contribute']"
    )
    button.click()
    verdict = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, "#relevance-model [data-verdict]"),
        "the measure",
        timeout=120,
    )
    assert verdict.get_attribute("data-verdict") in {"pay", "hurt", "nothing"}
    table = driver.find_element(By.ID, "nugget-value-table")
    rows = {
        r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.TAG_NAME, "td")
        for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")
    }
    assert set(rows) == {"with nuggets", "without nuggets"}
    for cells in rows.values():
        assert float(cells[0].text) > 0  # held-out log-loss
        assert float(cells[2].text) > 0  # mean interval width
        assert int(cells[3].text) == len(world.file_runs)
    driver.execute_script("arguments[0].scrollIntoView()", table)
    screenshot(driver, "job-nugget-value")
