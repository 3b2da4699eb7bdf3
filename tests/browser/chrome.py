"""Headless Debian Chromium for the browser tests of the researcher pages."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.urls import reverse

from nuggets_app.benchmarks import headless
from nuggets_app.benchmarks.headless import chromium_installed
from tests.helpers import poll_until

PASSWORD = "judge-all-day-42"  # tests.factories.UserFactory's
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@contextmanager
def chromium() -> Iterator:
    if not chromium_installed():
        pytest.skip("Debian chromium and chromedriver are not installed")
    with headless.chromium() as browser:
        yield browser


def wait_for(check: Callable[[], object], what: str, timeout: float = 30.0) -> object:
    """Poll until ``check()`` is truthy; while a page loads or reloads, any driver
    error (stale or missing element, detached frame) counts as "not yet"."""
    from selenium.common.exceptions import WebDriverException

    return poll_until(check, what, timeout, not_yet=(WebDriverException,))


def login(driver, base: str, username: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}{reverse('login')}")
    driver.find_element(By.ID, "id_username").send_keys(username)
    driver.find_element(By.ID, "id_password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(lambda: "/login/" not in driver.current_url, "login")


def open_page(driver, url: str) -> None:
    """Load ``url`` and wait until its module script has run."""
    driver.get(url)
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"),
        "page script",
    )


def screenshot(driver, name: str) -> None:
    """Save the window as ``test-artifacts/<name>.png`` (for a human to look at)."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


KEPT = Path(__file__).resolve().parent / "screenshots"


def keep_screenshot(driver, name: str) -> None:
    """Save the window as a test artifact, and with ``KEEP_SCREENSHOTS=1`` also as
    ``tests/browser/screenshots/<name>.png``: the pictures kept with the tests, in 64
    colours to stay small."""
    screenshot(driver, name)
    if os.environ.get("KEEP_SCREENSHOTS") != "1":
        return
    from PIL import Image

    KEPT.mkdir(exist_ok=True)
    image = Image.open(ARTIFACTS / f"{name}.png").convert("RGB")
    image.quantize(colors=64).save(KEPT / f"{name}.png", optimize=True)


def misaligned_numbers(driver) -> list[str]:
    """Cells of the page's tables showing a number, and the headers of their columns,
    that are not right-aligned: one table style puts figures under their headers."""
    return driver.execute_script(
        """
        const number = /^[-+]?(\\d[\\d,]*(\\.\\d+)?|\\.\\d+|n\\/a)( s|%)?$/;
        const bad = [];
        for (const table of document.querySelectorAll('table.progress')) {
          const heads = table.querySelectorAll('thead th');
          for (const row of table.querySelectorAll('tbody tr')) {
            Array.from(row.children).forEach((cell, i) => {
              if (cell.tagName !== 'TD' || cell.colSpan > 1) return;
              if (!number.test(cell.textContent.trim())) return;
              for (const el of [cell, heads[i]]) {
                if (el && getComputedStyle(el).textAlign !== 'right')
                  bad.push(`${table.id || table.querySelector('th').textContent}: ` +
                           `${el.tagName} ${el.textContent.trim()}`);
              }
            });
          }
        }
        return bad;
        """
    )


def chart_sizes(driver) -> list[tuple[float, float]]:
    """Each chart's rendered width and its smallest label's height, in pixels."""
    return driver.execute_script(
        """
        return Array.from(document.querySelectorAll('svg.chart')).map((svg) => {
          const labels = Array.from(svg.querySelectorAll('text'))
            .map((t) => t.getBoundingClientRect().height).filter((h) => h > 0);
          return [svg.getBoundingClientRect().width, Math.min(...labels)];
        });
        """
    )


def page_gone(element) -> bool:
    """Whether the page ``element`` belonged to has gone, after a click that
    navigates (Chromium answers a node of a document being replaced either as stale
    or as not of the document)."""
    from selenium.common.exceptions import (
        StaleElementReferenceException,
        WebDriverException,
    )

    try:
        element.tag_name  # noqa: B018
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise
    return False
