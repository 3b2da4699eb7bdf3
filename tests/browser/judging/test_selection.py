"""Selections in real headless Chromium become nuggets of whole words: by keyboard,
by a mouse drag that stops mid-word, and by a selection made without the mouse."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.models import Nugget
from tests.browser.chrome import login, open_page, wait_for
from tests.browser.judging.test_judging import doc_url, press, select_text
from tests.integration.worlds.judging import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


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


def drag(driver, needle: str, start: int, end: int) -> None:
    """Drag the mouse from character ``start`` to character ``end`` of the first
    ``needle`` in the document text (the middle of each character)."""
    from selenium.webdriver.common.action_chains import ActionChains

    points = driver.execute_script(
        """
        const [needle, start, end] = arguments;
        const root = document.getElementById('doc-text');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.data.indexOf(needle);
          if (at < 0) continue;
          node.parentElement.scrollIntoView({block: 'center'});
          return [at + start, at + end].map((i) => {
            const range = document.createRange();
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const r = range.getBoundingClientRect();
            return [Math.round(r.left + r.width / 2), Math.round(r.top + r.height / 2)];
          });
        }
        throw new Error('text not found: ' + needle);
        """,
        needle,
        start,
        end,
    )
    chain = ActionChains(driver)
    chain.w3c_actions.pointer_action.move_to_location(*points[0])
    chain.w3c_actions.pointer_action.pointer_down()
    chain.w3c_actions.pointer_action.move_to_location(*points[1])
    chain.w3c_actions.pointer_action.pointer_up()
    chain.perform()


def test_a_mouse_selection_is_snapped_to_whole_words(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    line = "an investigation is made of the parameters"
    # From "inv|estigation" to "para|meters": the drag stops mid-word at both ends.
    drag(driver, line, line.index("vestigation"), line.index("meters"))
    whole = "investigation is made of the parameters"
    wait_for(
        lambda: (
            driver.execute_script("return window.getSelection().toString()") == whole
        ),
        "the selection snapped on mouse up",
    )
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    assert nugget.span_text == whole
    text = world.docs["184"].text
    assert (nugget.start, nugget.end) == (
        text.index(whole),
        text.index(whole) + len(whole),
    )
    # A selection made without the mouse (a script, a touch) is snapped when saved.
    select_text(driver, "ly when aircraft and mod")
    press(driver, "h")
    wait_for(lambda: Nugget.objects.filter(assessor=assessor).count() == 2, "second")
    second = Nugget.objects.filter(assessor=assessor).order_by("-pk").first()
    assert second.span_text == "only when aircraft and model"
