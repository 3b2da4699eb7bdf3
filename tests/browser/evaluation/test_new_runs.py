"""A new run in real headless Chromium: a researcher opens a finished job, follows the
link to evaluate a new run, uploads a run file that did not contribute to the pool,
and sees its estimate marked "not in the pool" beside the pooled runs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.browser.chrome import login, screenshot, wait_for
from tests.integration.evaluation.test_new_runs import new_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
NEW = "browser-new-system"


@pytest.fixture
def world(fitted_world):
    return fitted_world


def test_a_researcher_uploads_a_new_run_and_sees_it_marked_not_pooled(
    driver, live_server, world, researcher, tmp_path
):
    from selenium.webdriver.common.by import By

    path = tmp_path / "new.run"
    lines = []
    for qid, docs in new_run(world).items():
        ranked = sorted(docs.items(), key=lambda kv: -kv[1])
        lines += [f"{qid} Q0 {d} {i} {s} {NEW}\n" for i, (d, s) in enumerate(ranked, 1)]
    path.write_text("".join(lines))
    login(driver, live_server.url, researcher.username)
    driver.get(f"{live_server.url}{reverse('job-detail', args=[world.job.pk])}")
    link = wait_for(lambda: driver.find_element(By.ID, "new-run-link"), "the link")
    link.click()
    upload = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, "input[type=file]"), "the form"
    )
    upload.send_keys(str(path))
    driver.find_element(By.CSS_SELECTOR, "#new-run-form button[type=submit]").click()
    table = wait_for(
        lambda: driver.find_element(By.ID, "table-new-runs"), "the estimates"
    )
    row = table.find_element(By.XPATH, f".//tbody/tr[th[normalize-space()='{NEW}']]")
    mark = row.find_element(By.CSS_SELECTOR, "td.pooled mark")
    assert mark.is_displayed()
    assert mark.text == "not in the pool"
    cells = row.find_elements(By.TAG_NAME, "td")
    low, high = (float(v) for v in cells[2].text.split(" \u2013 "))
    assert low <= float(cells[1].text) <= high
    assert int(cells[3].text) > 0
    pooled = table.find_elements(
        By.XPATH, ".//tbody/tr[td[normalize-space()='pooled']]"
    )
    assert {r.find_element(By.TAG_NAME, "th").text for r in pooled} == set(
        world.file_runs
    )
    note = driver.find_element(By.ID, "new-run-note")
    assert note.is_displayed()
    assert "did not contribute to the pool" in note.text
    rule = driver.find_element(By.ID, "not-in-collection-rule")
    assert "count as non-relevant" in rule.text
    missing = driver.find_element(
        By.CSS_SELECTOR, "#table-new-run-documents .not-in-collection"
    )
    assert missing.text == str(len(world.topics))
    # The bias check, relative to the pooled runs, with its verdict in words.
    headers = [h.text for h in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert headers[-2:] == ["EAP \u2212 shift \u00d7 statMAP", "bias"]
    verdict = row.find_element(By.CSS_SELECTOR, "td.bias-flag").text
    assert verdict == "no" or verdict.startswith("\u2691 flagged: the model alone")
    assert "pooled runs" in driver.find_element(By.ID, "flag-note").text
    new_figure = cells[1].text
    pooled_figures = {
        r.find_element(By.TAG_NAME, "th").text: r.find_elements(By.TAG_NAME, "td")[
            1
        ].text
        for r in pooled
    }
    driver.execute_script("arguments[0].scrollIntoView()", table)
    screenshot(driver, "new-run-not-in-the-pool")

    # The run is kept: listed on the job page, and reopened with the same figures.
    driver.get(f"{live_server.url}{reverse('job-detail', args=[world.job.pk])}")
    listed = wait_for(lambda: driver.find_element(By.ID, "job-new-runs"), "the list")
    listed.find_element(By.LINK_TEXT, NEW).click()
    table = wait_for(
        lambda: driver.find_element(By.ID, "table-new-runs"), "the reopened run"
    )
    again = table.find_element(By.XPATH, f".//tbody/tr[th[normalize-space()='{NEW}']]")
    assert again.find_elements(By.TAG_NAME, "td")[1].text == new_figure
    kept = driver.find_element(By.ID, "kept-new-runs")
    assert NEW in kept.text
    for r in table.find_elements(
        By.XPATH, ".//tbody/tr[td[normalize-space()='pooled']]"
    ):
        name = r.find_element(By.TAG_NAME, "th").text
        assert r.find_elements(By.TAG_NAME, "td")[1].text == pooled_figures[name]
