"""The runs page in real headless Chromium: a researcher sees the model-assisted MAP
with its interval, what the interval and the bias flag mean, and the flag of a run
that the model credits while the judged sample cannot see it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.evaluation.services.estimates import FLAG_REASONS
from nuggets_app.models import Judgment, PoolDocument, Run, RunEntry
from tests.browser.chrome import (
    chart_sizes,
    keep_screenshot,
    login,
    misaligned_numbers,
    screenshot,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FLAGGED = "unjudged-only"


@pytest.fixture
def world(fitted_world):
    world = fitted_world
    # A run of the pooled documents nobody judged: statAP gives it 0 with no
    # variance, the model credits it, so the bias check flags it.
    judged = set(Judgment.objects.values_list("topic_id", "document_id"))
    run = Run.objects.create(collection=world.collection, name=FLAGGED)
    entries, ranks = [], {}
    rows = PoolDocument.objects.filter(pool=world.pool).order_by(
        "topic_id", "document_id"
    )
    for topic_id, doc_id in rows.values_list("topic_id", "document_id"):
        if (topic_id, doc_id) not in judged:
            ranks[topic_id] = ranks.get(topic_id, 0) + 1
            entries.append(
                RunEntry(run=run, topic_id=topic_id, document_id=doc_id,
                         rank=ranks[topic_id], score=float(100 - ranks[topic_id]))
            )  # fmt: skip
    RunEntry.objects.bulk_create(entries)
    return world


def test_the_runs_page_shows_a_flagged_runs_flag_and_what_it_means(
    driver, live_server, world, staff, eager_tasks
):
    from selenium.webdriver.common.by import By

    login(driver, live_server.url, staff.username)
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    query = f"?sample={world.sample.pk}&expected={world.job.pk}&qrels=human"
    driver.get(f"{live_server.url}{url}{query}")
    table = wait_for(
        lambda: driver.find_element(By.ID, "table-model_assisted"),
        "the model-assisted table",
    )
    heads = table.find_elements(By.CSS_SELECTOR, "thead th")
    columns = [th.get_attribute("data-column") for th in heads]
    assert columns[:6] == ["run", "pool", "maAP", "ci_low", "ci_high", "topics"]
    assert "statMAP" in columns
    assert "bias_flag" in columns
    assert [th.text for th in heads[2:5]] == ["MAP estimate", "95% low", "95% high"]
    row = table.find_element(
        By.XPATH, f".//tbody/tr[th[normalize-space()='{FLAGGED}']]"
    )
    flag = row.find_element(By.CSS_SELECTOR, "td.bias-flag mark")
    assert flag.is_displayed()
    assert flag.text == "⚑ flagged"
    # What a flag means is one click away, under the numbers.
    driver.find_element(By.CSS_SELECTOR, "#model-assisted-method > summary").click()
    note = driver.find_element(By.ID, "flag-note")
    assert note.is_displayed()
    assert "by more than sampling explains" in note.text
    assert driver.find_element(By.ID, "interval-note").is_displayed()
    status = driver.find_element(By.CSS_SELECTOR, "#model-assisted [role=status]")
    assert FLAGGED in status.text
    # One line in plain words per flagged run.
    reason = driver.find_element(
        By.XPATH, f"//*[@id='flag-reasons']//li[strong[normalize-space()='{FLAGGED}']]"
    )
    assert reason.text == f"{FLAGGED}: {FLAG_REASONS['over']}."
    driver.execute_script("arguments[0].scrollIntoView()", table)
    screenshot(driver, "runs-model-assisted-flag")


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_the_runs_page_draws_each_runs_interval_as_an_error_bar(
    driver, live_server, world, staff, eager_tasks, size
):
    from selenium.webdriver.common.by import By

    login(driver, live_server.url, staff.username)
    driver.set_window_size(*size)
    try:
        url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
        query = f"?sample={world.sample.pk}&expected={world.job.pk}&qrels=human"
        driver.get(f"{live_server.url}{url}{query}")
        table = wait_for(
            lambda: driver.find_element(By.ID, "table-model_assisted"), "the table"
        )
        rows = {
            tr.find_element(By.TAG_NAME, "th").text: [
                td.text for td in tr.find_elements(By.TAG_NAME, "td")
            ]
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr")
        }
        chart = driver.find_element(By.ID, "interval-chart")
        runs = chart.find_elements(By.CSS_SELECTOR, "g.run")
        assert {g.get_attribute("data-run") for g in runs} == set(rows)
        for g in runs:
            cells = rows[g.get_attribute("data-run")]
            estimate, low, high = (float(c) for c in cells[1:4])
            bar = g.find_element(By.CSS_SELECTOR, "line.interval")
            dot = g.find_element(By.CSS_SELECTOR, "circle.estimate")
            x0, x1 = (float(bar.get_attribute(a)) for a in ("x1", "x2"))
            cx = float(dot.get_attribute("cx"))
            assert x0 <= cx <= x1
            # Positions are proportional to the values (one axis for every run).
            if high > low:
                assert (cx - x0) / (x1 - x0) == pytest.approx(
                    (estimate - low) / (high - low), abs=0.02
                )
            flagged = cells[-1] == "\u2691 flagged"  # the reason is above the table
            assert ("flagged" in g.get_attribute("class")) == flagged
        assert misaligned_numbers(driver) == []
        for width, label in chart_sizes(driver):
            assert width >= 480
            assert label >= 10
        banner = driver.find_element(By.ID, "flag-reasons")
        assert "banner" in banner.get_attribute("class")
        driver.execute_script("arguments[0].scrollIntoView()", chart)
        keep_screenshot(driver, f"evaluate-{size[0]}x{size[1]}")
    finally:
        driver.set_window_size(1280, 800)
