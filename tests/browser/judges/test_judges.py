"""Staff upload an automatic judge's labels on the judges page and read its kappa,
with its interval, on the audit, in real headless Chromium.

The world: the demo judged by people (its statAP sample graded with its own qrels)
and a judge's qrels for its pool written from the same truth with every fifth
document's call flipped."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from selenium.webdriver.common.by import By

from nuggets_app.models import Judge
from tests.browser.chrome import login, page_gone, screenshot, wait_for
from tests.integration.worlds.judges import judged_demo, write_judge_qrels

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
INTERVAL = re.compile(r"(-?\d\.\d{3}) \[(-?\d\.\d{3}), (-?\d\.\d{3})\]")


def _submit(driver, selector: str) -> None:
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, selector).click()
    wait_for(lambda: page_gone(old), "the next page")


def test_staff_upload_a_judge_and_read_its_kappa_with_its_interval(
    driver, live_server, staff, tmp_path
):
    world = judged_demo()
    path = write_judge_qrels(world, tmp_path / "flipper.qrels")
    login(driver, live_server.url, "root")
    driver.get(live_server.url + reverse("staff-collection", args=["demo"]))
    driver.find_element(By.ID, "judges-link").click()
    wait_for(lambda: driver.find_element(By.ID, "judge-upload-form"), "upload form")
    driver.find_element(By.ID, "id_file").send_keys(str(path))
    driver.find_element(By.ID, "id_judge").send_keys("flipper")
    driver.find_element(By.ID, "id_model").send_keys("every fifth flipped")
    _submit(driver, "#judge-upload-form button[type=submit]")
    row = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, 'tr[data-judge="flipper"]'),
        "the judge's row",
    )
    assert "every fifth flipped" in row.text
    assert Judge.objects.get(name="flipper").labels.count() == 234

    driver.find_element(By.ID, "audit-link").click()
    cell = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, '[data-judge="flipper"] td.kappa'),
        "the judge's kappa",
    )
    value, low, high = map(float, INTERVAL.fullmatch(cell.text).groups())
    assert -1 <= low <= value <= high <= 1
    assert low < high
    summary = driver.find_element(By.ID, "audit-summary").text
    assert "flipper: This judge calls" in summary
    screenshot(driver, "judge-audit")

    # A disagreement opens its document as text, with both labels beside it.
    link = driver.find_element(By.CSS_SELECTOR, "table.disagreements a")
    docno = link.text
    link.click()
    labels = wait_for(
        lambda: driver.find_element(By.ID, "document-labels").text, "labels"
    )
    assert "Judge flipper" in labels
    assert docno in driver.find_element(By.TAG_NAME, "h1").text
