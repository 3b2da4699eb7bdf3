"""The researcher's job pages in real headless Chromium: the launch form shows the
field its Source needs, and the job page shows only the controls that apply, kept up
to date by the progress polling."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.inference.services import matching
from nuggets_app.inference.services.matching import launch
from tests.browser.chrome import (
    chart_sizes,
    keep_screenshot,
    login,
    misaligned_numbers,
    open_page,
    screenshot,
    wait_for,
)
from tests.integration.worlds.cranfield_pool import cranfield_world, run_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(shared_data, assessor, monkeypatch):
    # No broker traffic: the test runs chunks itself, when it wants the job to move.
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    return cranfield_world(shared_data, assessor, per_topic=12)


def _visible(driver, selector: str) -> bool:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector).is_displayed()


def test_the_launch_form_shows_pool_or_sample_by_source(
    driver, live_server, world, staff
):
    from selenium.webdriver.support.ui import Select

    login(driver, live_server.url, staff.username)
    open_page(driver, f"{live_server.url}{reverse('job-launch')}")
    source = Select(driver.find_element("name", "source"))
    assert source.first_selected_option.get_attribute("value") == "pool"
    assert _visible(driver, '[data-field="pool"]')
    assert not _visible(driver, '[data-field="sample"]')
    screenshot(driver, "job-launch-form")
    source.select_by_value("sample")
    assert _visible(driver, '[data-field="sample"]')
    assert not _visible(driver, '[data-field="pool"]')
    source.select_by_value("collection")
    assert not _visible(driver, '[data-field="pool"]')
    assert not _visible(driver, '[data-field="sample"]')
    # The only pool is chosen already: Pool as Source launches without touching it.
    source.select_by_value("pool")
    driver.find_element("name", "topics").send_keys("1")
    driver.find_element("css selector", "#launch-form button[type=submit]").click()
    wait_for(lambda: "/jobs/new/" not in driver.current_url, "the job page")
    assert _visible(driver, '[data-action="cancel"]')


def test_polling_swaps_cancel_for_what_applies(driver, live_server, world, staff):
    login(driver, live_server.url, staff.username)
    pool = {"collection": world.collection, "source": "pool", "pool": world.pool}
    finishing = matching.match_job_launch(topics=world.topics[:1], **pool)
    open_page(driver, f"{live_server.url}{reverse('job-detail', args=[finishing.pk])}")
    assert _visible(driver, '[data-action="cancel"]')
    assert not _visible(driver, '[data-action="resume"]')
    assert not _visible(driver, '[data-action="rescore"]')
    run_inline(finishing)
    wait_for(
        lambda: (
            driver.find_element("css selector", '[data-field="status"]').text == "done"
        ),
        "the polling to see the job done",
    )
    assert not _visible(driver, '[data-action="cancel"]')
    assert not _visible(driver, '[data-action="resume"]')
    assert _visible(driver, '[data-action="rescore"]')
    screenshot(driver, "job-page-done")

    stopping = matching.match_job_launch(topics=world.topics[:1], **pool)
    open_page(driver, f"{live_server.url}{reverse('job-detail', args=[stopping.pk])}")
    assert _visible(driver, '[data-action="cancel"]')
    matching.match_job_cancel(job=stopping)
    wait_for(
        lambda: _visible(driver, '[data-action="resume"]'),
        "the polling to offer a re-run",
    )
    assert not _visible(driver, '[data-action="cancel"]')


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_job_pages_share_one_table_style_readable_charts_and_message_banners(
    driver, live_server, world, staff, size
):
    from selenium.webdriver.common.by import By

    job = run_inline(
        matching.match_job_launch(
            collection=world.collection, topics=world.topics, source="pool",
            pool=world.pool,
        )
    )  # fmt: skip
    login(driver, live_server.url, staff.username)
    driver.set_window_size(*size)
    try:
        detail = f"{live_server.url}{reverse('job-detail', args=[job.pk])}"
        open_page(driver, detail)
        # A message after an action is a banner, announced, not plain text.
        rescore = driver.find_element(By.CSS_SELECTOR, '[data-action="rescore"]')
        rescore.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        banner = wait_for(
            lambda: driver.find_element(By.CSS_SELECTOR, ".messages li"), "message"
        )
        assert banner.get_attribute("role") == "status"
        style = driver.execute_script(
            "const s = getComputedStyle(arguments[0]);"
            "return [s.backgroundColor, s.borderLeftWidth, s.paddingTop];",
            banner,
        )
        assert style[0] not in ("rgba(0, 0, 0, 0)", "transparent"), style
        assert float(style[1].removesuffix("px")) >= 3, style
        keep_screenshot(driver, f"job-{size[0]}x{size[1]}")

        topic = world.topics[0]
        open_page(
            driver,
            f"{live_server.url}{reverse('job-topic', args=[job.pk, topic.qid])}",
        )
        assert misaligned_numbers(driver) == []
        sizes = chart_sizes(driver)
        assert sizes
        for width, label in sizes:
            assert width >= 480, sizes
            assert label >= 10, sizes
    finally:
        driver.set_window_size(1280, 800)
