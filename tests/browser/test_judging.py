"""The judging flow in real headless Chromium: login, keyboard judging, nuggets from a
selection with exact offsets, editing, reload, and another assessor locked out."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.urls import reverse

from nuggets_app.models import Judgment, Nugget
from tests import factories as f
from tests.integration.judging_world import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHRASE = "thermo-aeroelastic similarity"
# CRLF, an astral character (2 UTF-16 units, 1 code point) and a combining accent before
# the target: offsets must still be the Python code-point offsets.
TRICKY = "Cafe\u0301 \U0001d518 notes\r\nsecond line: the target words are here.\r\nend"


@pytest.fixture(scope="module")
def driver():
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("Debian chromium and chromedriver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update",
        "--no-first-run", f"--user-data-dir={profile}", "--window-size=1280,800",
    ):  # fmt: skip
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.implicitly_wait(0)
    yield browser
    browser.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait_for(check: Callable[[], object], what: str, timeout: float = 15.0) -> object:
    """Poll until ``check()`` is truthy (saves are asynchronous).

    While a new page loads, an element found a moment ago can go stale or be missing:
    that counts as "not yet".
    """
    from selenium.common.exceptions import (
        NoSuchElementException,
        StaleElementReferenceException,
    )

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except (NoSuchElementException, StaleElementReferenceException):
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def login(driver, base: str, username: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}{reverse('login')}")
    driver.find_element(By.ID, "id_username").send_keys(username)
    driver.find_element(By.ID, "id_password").send_keys("judge-all-day-42")
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(lambda: "/login/" not in driver.current_url, "login")


def open_page(driver, url: str) -> None:
    driver.get(url)
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"),
        "page script",
    )


def press(driver, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def select_text(driver, needle: str) -> None:
    """Select the first occurrence of ``needle`` as a mouse drag would (one DOM Range)."""
    driver.execute_script(
        """
        const needle = arguments[0];
        const root = document.getElementById('doc-text');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.data.indexOf(needle);
          if (at >= 0) {
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + needle.length);
            const sel = window.getSelection();
            sel.removeAllRanges();
            sel.addRange(range);
            return;
          }
        }
        throw new Error('text not found: ' + needle);
        """,
        needle,
    )


def screenshot(driver, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    world = build_world(shared_data, assessor, other_assessor)
    tricky = f.DocumentFactory(collection=world.collection, docno="TRICKY", text=TRICKY)
    f.SampleDocumentFactory(
        sample=world.assignment.sample, topic=world.topic, document=tricky, order=8
    )
    world.extra["tricky"] = tricky
    return world


def test_judge_by_keyboard_make_edit_and_reload_a_nugget(
    driver, live_server, world, assessor
):
    from selenium.webdriver.common.by import By

    login(driver, live_server.url, "alice")
    # An assessor lands on their topics straight after logging in.
    driver.find_element(By.ID, "resume").click()
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"), "page"
    )
    assert driver.find_element(By.ID, "docno").text == "184"

    press(driver, "2")
    wait_for(
        lambda: Judgment.objects.filter(assessor=assessor, relevance=2).exists(),
        "judgment",
    )
    select_text(driver, PHRASE)
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    text = world.docs["184"].text
    assert (nugget.start, nugget.end) == (
        text.index(PHRASE),
        text.index(PHRASE) + len(PHRASE),
    )
    assert nugget.span_text == PHRASE

    editor = wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
    )[0]
    area = editor.find_element(By.NAME, "text")
    area.clear()
    area.send_keys("complete thermo-aeroelastic similarity needs an identical model")
    editor.find_element(By.NAME, "keywords").send_keys("similarity, model")
    wait_for(
        lambda: Nugget.objects.get(pk=nugget.pk).keywords == ["similarity", "model"],
        "edit saved",
    )
    screenshot(driver, "judge-page-with-nugget")

    driver.refresh()
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"), "reload"
    )
    editor = driver.find_element(By.CSS_SELECTOR, ".nugget-editor")
    assert (
        editor.find_element(By.NAME, "text")
        .get_attribute("value")
        .startswith("complete thermo")
    )
    assert (
        editor.find_element(By.NAME, "keywords").get_attribute("value")
        == "similarity, model"
    )
    pressed = driver.find_element(By.CSS_SELECTOR, "button.grade[aria-pressed=true]")
    assert pressed.get_attribute("data-grade") == "2"
    highlighted = driver.find_elements(
        By.CSS_SELECTOR, f'.seg.hl[data-n~="{nugget.pk}"]'
    )
    assert "".join(el.text for el in highlighted) == PHRASE
    nugget.refresh_from_db()
    assert nugget.version >= 2

    # Shortcuts are ignored while typing: "j" in the text field did not navigate.
    assert driver.find_element(By.ID, "docno").text == "184"
    press(driver, "?")
    assert driver.find_element(By.ID, "help").is_displayed()
    screenshot(driver, "judge-help-overlay")
    press(driver, "\ue00c")  # Escape
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "next document")


def test_offsets_are_code_points_across_crlf_and_astral_characters(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, live_server.url + reverse("judge", args=[world.assignment.pk, 8]))
    select_text(driver, "target words")
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    start = TRICKY.index("target words")
    assert (nugget.start, nugget.end, nugget.span_text) == (
        start,
        start + 12,
        "target words",
    )
    # A selection across the CRLF keeps the CR (rebuilt from its marker segment).
    select_text(driver, "notes")
    driver.execute_script(
        "const s = window.getSelection(); s.extend(s.focusNode.parentElement.nextSibling.nextSibling.firstChild, 7);"
    )
    press(driver, "h")
    wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).count() == 2, "second nugget"
    )
    second = Nugget.objects.filter(assessor=assessor).order_by("-pk").first()
    assert second.span_text == TRICKY[second.start : second.end]
    assert second.span_text == "notes\r\nsecond"
    screenshot(driver, "judge-page-tricky-offsets")


def test_keyboard_selection_makes_a_nugget_of_whole_words(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, live_server.url + reverse("judge", args=[world.assignment.pk, 1]))
    press(driver, "v")
    press(driver, "w")
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    text = world.docs["184"].text
    assert nugget.span_text == text[nugget.start : nugget.end]
    assert len(nugget.span_text.split()) >= 2


def test_a_second_assessor_cannot_open_the_first_ones_page(driver, live_server, world):
    login(driver, live_server.url, "bob")
    driver.get(live_server.url + reverse("judge", args=[world.assignment.pk, 1]))
    assert "Not Found" in driver.page_source
    assert "184" not in driver.title
    screenshot(driver, "judge-page-refused")
