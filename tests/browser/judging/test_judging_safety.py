"""Human work is never lost or silently overwritten, in real headless Chromium: a grade
changed in two tabs is a conflict resolved either way, text typed just before leaving
the page is saved, and undo by key takes back a deleted nugget and a changed grade."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from nuggets_app.models import Judgment, Nugget, WorkChange
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.browser.judging.test_judging import (
    doc_url,
    highlight,
    press,
)
from tests.integration.worlds.judging import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
By = pytest.importorskip("selenium.webdriver.common.by").By
Keys = pytest.importorskip("selenium.webdriver.common.keys").Keys


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def grade_shown(driver) -> str:
    pressed = driver.find_elements(By.CSS_SELECTOR, "button.grade[aria-pressed=true]")
    return pressed[0].text if pressed else ""


def stored(assessor, world) -> Judgment | None:
    return Judgment.objects.filter(
        assessor=assessor, topic=world.topic, document=world.docs["184"]
    ).first()


def grade_stored(assessor, world) -> int | None:
    return getattr(stored(assessor, world), "relevance", None)


def saved(driver) -> bool:
    """Nothing waits to be saved (the status says so, or names the nugget saved)."""
    status = driver.find_element(By.ID, "save-status")
    return status.get_attribute("data-kind") == "saved"


def two_tabs(driver, url: str) -> tuple[str, str]:
    """Tab A and tab B on the same document, both loaded before either saves."""
    open_page(driver, url)
    tab_a = driver.current_window_handle
    driver.switch_to.new_window("tab")
    open_page(driver, url)
    return tab_a, driver.current_window_handle


@pytest.mark.parametrize("choice", ["keep-mine", "take-theirs"])
def test_a_grade_changed_in_two_tabs_is_a_conflict_resolved_either_way(
    driver, live_server, world, assessor, choice
):
    login(driver, live_server.url, "alice")
    tab_a, tab_b = two_tabs(driver, doc_url(live_server, world, 1))
    driver.switch_to.window(tab_a)
    press(driver, "1")
    wait_for(lambda: saved(driver), "tab A saved")
    assert stored(assessor, world).relevance == 1

    driver.switch_to.window(tab_b)
    press(driver, "0")
    box = driver.find_element(By.ID, "judgment-conflict")
    wait_for(box.is_displayed, "the conflict in tab B")
    assert "Relevant" in box.find_element(By.CSS_SELECTOR, ".theirs-grade").text
    assert box.find_element(By.CSS_SELECTOR, ".theirs-by").text == "alice"
    assert box.find_element(By.CSS_SELECTOR, ".mine-grade").text == "Non-relevant"
    status = driver.find_element(By.ID, "save-status")
    assert status.get_attribute("data-kind") == "conflict"
    assert stored(assessor, world).relevance == 1  # nothing overwritten
    screenshot(driver, f"judge-grade-conflict-{choice}")

    box.find_element(By.CSS_SELECTOR, f".{choice}").click()
    wait_for(lambda: not box.is_displayed(), "the conflict resolved")
    if choice == "keep-mine":
        wait_for(lambda: grade_stored(assessor, world) == 0, "mine stored")
        assert stored(assessor, world).version == 2
        wait_for(lambda: saved(driver), "saved after keep mine")
        expected = "Non-relevant"
    else:
        assert grade_shown(driver).endswith("Relevant")
        assert "Non" not in grade_shown(driver)
        assert stored(assessor, world).relevance == 1
        expected = "Relevant"
    assert grade_shown(driver).endswith(expected)

    # Tab A learns the stored grade when it shows the document again.
    driver.switch_to.window(tab_a)
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "next")
    press(driver, "k")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "184", "back")
    wait_for(lambda: grade_shown(driver).endswith(expected), "tab A shows it")
    if choice == "keep-mine":
        # Its history lists the change it learnt of (the status line moves on).
        history = driver.find_element(By.ID, "history-list")
        wait_for(lambda: "Relevant → Non-relevant" in history.text, "the history")


def nugget_editor(driver):
    return wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
    )[0]


@pytest.mark.parametrize("leave", ["link", "reload"])
def test_text_typed_just_before_leaving_the_page_is_saved(
    driver, live_server, world, assessor, leave
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    nugget = highlight(driver, assessor)
    wait_for(lambda: saved(driver), "the nugget saved")
    area = nugget_editor(driver).find_element(By.NAME, "text")
    # Typed, then away at once: well within the edit debounce.
    area.send_keys(" typed at the last moment")
    if leave == "link":
        driver.find_element(
            By.CSS_SELECTOR, f"a[href='{reverse('assessor-home')}']"
        ).click()
        wait_for(lambda: "/assess/" in driver.current_url, "the home page")
    else:
        driver.refresh()
    wait_for(
        lambda: Nugget.objects.get(pk=nugget.pk).text.endswith("at the last moment"),
        "the text saved",
    )
    assert Nugget.objects.get(pk=nugget.pk).version == 2


def test_undo_by_key_restores_a_deleted_nugget_and_a_changed_grade(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    press(driver, "1")
    wait_for(lambda: grade_stored(assessor, world) == 1, "graded 1")
    press(driver, "2")
    wait_for(lambda: grade_stored(assessor, world) == 2, "graded 2")
    nugget = highlight(driver, assessor)
    wait_for(lambda: saved(driver), "the nugget saved")
    nugget_editor(driver).find_element(By.CSS_SELECTOR, ".delete").click()
    # Moving on sends the delete at once (the few seconds' undo is over).
    press(driver, "j")
    wait_for(lambda: not Nugget.objects.filter(pk=nugget.pk).exists(), "deleted")
    press(driver, "k")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "184", "back")
    history = driver.find_element(By.ID, "history-list")
    wait_for(lambda: "nugget deleted" in history.text, "the delete in the history")
    assert "grade" in history.text
    assert "alice" in history.text

    press(driver, "z")
    wait_for(lambda: Nugget.objects.filter(pk=nugget.pk).exists(), "nugget back")
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".seg.hl"), "highlight back")
    restored = Nugget.objects.get(pk=nugget.pk)
    assert (restored.text, restored.span_text) == (nugget.text, nugget.span_text)
    wait_for(lambda: nugget_editor(driver), "its editor back")

    press(driver, "z")  # the nugget's creation is next: undo it too
    wait_for(lambda: not Nugget.objects.filter(pk=nugget.pk).exists(), "undone")
    press(driver, "z")  # then the grade 1 -> 2
    wait_for(lambda: grade_stored(assessor, world) == 1, "grade back to 1")
    wait_for(lambda: grade_shown(driver).endswith("Relevant"), "grade 1 shown")
    assert "Highly" not in grade_shown(driver)
    undos = WorkChange.objects.filter(owner=assessor, undo_of__isnull=False)
    assert undos.count() == 3
    screenshot(driver, "judge-history-after-undo")


def test_an_edit_then_a_grade_survive_the_tab_closing_at_once(
    driver, live_server, world, assessor, monkeypatch
):
    """e, type, Esc, a grade key, and the tab closed within the edit's debounce: the
    grade's save is still on the wire (the server is slow to answer it), and the
    edit queued behind it must not die with the page."""
    from assessor_ui.views import judge as judge_views

    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    nugget = highlight(driver, assessor)
    wait_for(lambda: saved(driver), "the nugget saved")
    record = judge_views.judgment_record

    def slow_record(**kwargs):
        time.sleep(1.5)
        return record(**kwargs)

    monkeypatch.setattr(judge_views, "judgment_record", slow_record)
    keep = driver.current_window_handle
    driver.switch_to.new_window("tab")
    spare = driver.current_window_handle
    driver.switch_to.window(keep)
    press(driver, "e")
    press(driver, " typed then graded")
    press(driver, Keys.ESCAPE)
    press(driver, "2")
    driver.close()
    driver.switch_to.window(spare)
    wait_for(lambda: grade_stored(assessor, world) == 2, "the grade saved")
    wait_for(
        lambda: Nugget.objects.get(pk=nugget.pk).text.endswith("typed then graded"),
        "the text saved",
    )
