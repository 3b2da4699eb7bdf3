"""The judging flow in real headless Chromium: login, keyboard judging, nuggets from a
selection with exact offsets, editing, reload, and another assessor locked out."""

from __future__ import annotations

import time

import pytest
from django.urls import reverse

from nuggets_app.models import Judgment, Nugget, Topic
from tests import factories as f
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.integration.worlds.judging import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
By = pytest.importorskip("selenium.webdriver.common.by").By

PHRASE = "thermo-aeroelastic similarity"
# CRLF, an astral character (2 UTF-16 units, 1 code point) and a combining accent before
# the target: offsets must still be the Python code-point offsets.
TRICKY = "Cafe\u0301 \U0001d518 notes\r\nsecond line: the target words are here.\r\nend"


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
    nugget = highlight(driver, assessor)
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
    # The page clears its selection once the nugget's answer arrives: wait for it,
    # or the clearing can take the next selection.
    wait_for(
        lambda: "Nugget saved" in driver.find_element(By.ID, "save-status").text,
        "the first nugget's answer",
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


def test_a_second_assessor_cannot_open_the_first_ones_page(driver, live_server, world):
    login(driver, live_server.url, "bob")
    driver.get(live_server.url + reverse("judge", args=[world.assignment.pk, 1]))
    assert "Not Found" in driver.page_source
    assert "184" not in driver.title
    screenshot(driver, "judge-page-refused")


def highlight(driver, assessor, needle: str = PHRASE) -> Nugget:
    """Select ``needle`` and press h: the assessor's (first) nugget, once saved."""
    select_text(driver, needle)
    press(driver, "h")
    return wait_for(lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget")


def doc_url(live_server, world, position: int) -> str:
    return live_server.url + reverse("judge", args=[world.assignment.pk, position])


def test_moves_show_the_next_document_without_a_page_load_and_history_works(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    # A mark on the window survives a move only if the page was not loaded again.
    driver.execute_script("window.notReloaded = true;")
    press(driver, "2")
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "next document")
    assert driver.execute_script("return window.notReloaded") is True
    assert driver.current_url.endswith(reverse("judge", args=[world.assignment.pk, 2]))
    # The judgment of the document left behind was saved, without holding the move up.
    wait_for(
        lambda: Judgment.objects.filter(
            assessor=assessor, document=world.docs["184"], relevance=2
        ).exists(),
        "judgment of the first document",
    )
    text = driver.find_element(By.ID, "doc-text").text
    assert text.replace("\n", " ")[:40] == world.docs["29"].text.replace("\n", " ")[:40]
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "31", "third")
    driver.back()
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "back")
    driver.back()
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "184", "back again")
    pressed = driver.find_element(By.CSS_SELECTOR, "button.grade[aria-pressed=true]")
    assert pressed.get_attribute("data-grade") == "2"
    driver.forward()
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "forward")
    assert driver.execute_script("return window.notReloaded") is True
    assert driver.find_element(By.ID, "judged-count").text == "1"
    # A reload shows the document of the address bar.
    driver.refresh()
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"), "reload"
    )
    assert driver.find_element(By.ID, "docno").text == "29"
    assert driver.execute_script("return window.notReloaded") is None


def test_a_nugget_made_after_a_move_belongs_to_the_document_shown(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "next document")
    words = " ".join(world.docs["29"].text.split()[3:6])
    select_text(driver, words)
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    assert nugget.document == world.docs["29"]
    assert nugget.span_text == words
    # Its score shows without a reload.
    wait_for(
        lambda: (
            driver.find_element(
                By.CSS_SELECTOR, f'#topic-nuggets [data-id="{nugget.pk}"] .score'
            ).text
            not in ("", "\u2013")
        ),
        "score of the new nugget",
    )


def test_selections_are_trimmed_and_short_or_duplicate_ones_refused(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    select_text(driver, "sc")  # part of "scale": one word, once snapped
    press(driver, "h")
    wait_for(
        lambda: "at least 2 words" in driver.find_element(By.ID, "save-status").text,
        "refusal of a one-word selection",
    )
    select_text(driver, f" {PHRASE} ")
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    assert nugget.span_text == PHRASE
    # The row is stored before the answer reaches the page: wait for its status line.
    status = wait_for(
        lambda: (
            PHRASE in driver.find_element(By.ID, "save-status").text
            and driver.find_element(By.ID, "save-status").text
        ),
        "the saved nugget's status line",
    )
    assert str(nugget.start) not in status
    select_text(driver, PHRASE)
    press(driver, "h")
    wait_for(
        lambda: "already" in driver.find_element(By.ID, "save-status").text,
        "refusal of the same span again",
    )
    assert Nugget.objects.filter(assessor=assessor).count() == 1


def test_an_edit_conflict_shows_the_other_version_and_is_not_called_saved(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    nugget = highlight(driver, assessor)
    # Another tab saves first.
    Nugget.objects.filter(pk=nugget.pk).update(
        text="the other tab's wording", version=nugget.version + 1
    )
    editor = wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
    )[0]
    editor.find_element(By.NAME, "text").send_keys(" and mine")
    conflict = editor.find_element(By.CSS_SELECTOR, ".conflict")
    wait_for(conflict.is_displayed, "conflict")
    assert "the other tab's wording" in conflict.text
    status = driver.find_element(By.ID, "save-status")
    assert status.get_attribute("data-kind") == "conflict"
    assert "All changes saved" not in status.text
    screenshot(driver, "judge-edit-conflict")
    conflict.find_element(By.CSS_SELECTOR, ".keep-mine").click()
    wait_for(lambda: Nugget.objects.get(pk=nugget.pk).text.endswith("and mine"), "mine")
    wait_for(lambda: status.text == "All changes saved", "saved after keep mine")


def test_a_deleted_nugget_can_be_taken_back_for_a_few_seconds(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    nugget = highlight(driver, assessor)
    editor = wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
    )[0]
    editor.find_element(By.CSS_SELECTOR, ".delete").click()
    assert not driver.find_elements(By.CSS_SELECTOR, ".seg.hl")
    driver.find_element(By.ID, "undo").click()
    time.sleep(6)
    assert Nugget.objects.filter(pk=nugget.pk).exists()
    assert driver.find_elements(By.CSS_SELECTOR, ".seg.hl")
    driver.find_element(By.CSS_SELECTOR, ".nugget-editor .delete").click()
    wait_for(lambda: not Nugget.objects.filter(pk=nugget.pk).exists(), "deleted")


def test_topic_terms_mark_inflections_and_skip_stopwords(driver, live_server, world):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    press(driver, "t")
    marked = driver.execute_script(
        "return Array.from(CSS.highlights.get('topic-terms') || []).map(r => r.toString())"
    )
    words = {w.lower() for w in marked}
    # Topic: "what similarity laws must be obeyed ... aeroelastic models ...".
    assert {"models", "model", "similarity", "aeroelastic"} <= words
    assert not words & {"the", "what", "of", "be", "for"}


def test_the_document_stays_in_view_at_1024_by_700(driver, live_server, world):
    login(driver, live_server.url, "alice")
    driver.set_window_size(1024, 700)
    try:
        open_page(driver, doc_url(live_server, world, 1))
        height = driver.execute_script("return window.innerHeight")
        top = driver.execute_script(
            "return document.getElementById('doc-text').getBoundingClientRect().top"
        )
        assert top < height / 2
        screenshot(driver, "judge-page-1024x700")
    finally:
        driver.set_window_size(1280, 800)


def test_a_keyboard_sentence_selection_is_saved_without_trailing_whitespace(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    press(driver, "v")
    press(driver, ")")
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    assert nugget.span_text == nugget.span_text.strip()
    assert nugget.span_text.startswith("scale models")
    assert world.docs["184"].text[nugget.start : nugget.end] == nugget.span_text


def test_an_aspect_made_in_the_nugget_form_tags_the_nugget_at_once(
    driver, live_server, world, assessor
):
    from selenium.webdriver.support.ui import Select

    # A slug of the label, never a number that reads as a grade or a qid.
    SLUG = "wind-btunnelb-tests"
    login(driver, live_server.url, "alice")
    open_page(
        driver,
        live_server.url + reverse("judge", args=[world.assignment.pk, 1]),
    )
    nugget = highlight(driver, assessor)
    editor = wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
    )[0]
    editor.find_element(By.CSS_SELECTOR, "button.new-aspect").click()
    label = editor.find_element(By.NAME, "aspect_text")
    wait_for(label.is_displayed, "new aspect field")
    # Markup in a label is text: it reaches the select and the topic card escaped.
    label.send_keys("wind <b>tunnel</b> tests\ue007")  # Enter adds it
    # Two requests in a row (add the aspect, then save the nugget after the editor's
    # debounce): allow for a loaded machine.
    wait_for(
        lambda: Nugget.objects.get(pk=nugget.pk).aspect == SLUG,
        "nugget tagged",
        timeout=60,
    )
    added = Topic.objects.get(pk=world.topic.pk).aspects[-1]
    assert (added["id"], added["text"], added["created_by"]) == (
        SLUG,
        "wind <b>tunnel</b> tests",
        "alice",
    )
    select = Select(editor.find_element(By.NAME, "aspect"))
    assert select.first_selected_option.text == f"{SLUG}: wind <b>tunnel</b> tests"
    card = driver.find_element(By.ID, "topic-aspects")
    assert f"{SLUG} wind <b>tunnel</b> tests" in card.text
    assert not card.find_elements(By.TAG_NAME, "b")
    screenshot(driver, "judge-new-aspect")

    # A label the topic has already selects that aspect instead of adding one.
    editor.find_element(By.CSS_SELECTOR, "button.new-aspect").click()
    editor.find_element(By.NAME, "aspect_text").send_keys("MODELS\ue007")
    wait_for(
        lambda: Nugget.objects.get(pk=nugget.pk).aspect == "a2",
        "existing aspect",
        timeout=60,
    )
    select = Select(editor.find_element(By.NAME, "aspect"))
    assert select.first_selected_option.text == "a2: models"
    assert len(Topic.objects.get(pk=world.topic.pk).aspects) == 3

    # After a reload the new aspect is one of the select's options.
    driver.refresh()
    wait_for(
        lambda: driver.execute_script("return document.body.dataset.ready"), "reload"
    )
    editor = driver.find_element(By.CSS_SELECTOR, ".nugget-editor")
    options = [o.text for o in Select(editor.find_element(By.NAME, "aspect")).options]
    assert options == [
        "none",
        "a1: similarity laws",
        "a2: models",
        f"{SLUG}: wind <b>tunnel</b> tests",
    ]


def data_fetches(driver, since: float = 0.0) -> list[tuple[int, float]]:
    """The page's requests to the data endpoint started at or after ``since`` (ms of
    the page's clock), as (queue position, start time), from the browser's own
    resource timing."""
    return [
        (int(position), start)
        for position, start in driver.execute_script(
            """
            return performance.getEntriesByType("resource")
              .map((e) => [new URL(e.name).pathname.split("/"), e.startTime])
              .filter(([parts, start]) => parts.at(-1) === "data" && start >= arguments[0])
              .map(([parts, start]) => [parts.at(-2), start]);
            """,
            since,
        )
    ]


def test_a_nugget_change_refetches_the_document_shown_not_every_neighbour(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 2))
    driver.execute_script(
        """window.shownAt = {};
        document.addEventListener("judge:shown", (e) => {
          window.shownAt[e.detail.position] = performance.now();
        });"""
    )
    # The previous document and the next two are fetched ahead.
    wait_for(lambda: {1, 3, 4} <= {p for p, _ in data_fetches(driver)}, "prefetched")
    since = driver.execute_script("return performance.now()")
    # In 29 and in 31 (where the matcher finds it), not in 12.
    select_text(driver, "thermal stress distribution")
    press(driver, "h")
    nugget = wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).first(), "nugget"
    )
    score = f'#topic-nuggets [data-id="{nugget.pk}"] .score'
    wait_for(lambda: 2 in {p for p, _ in data_fetches(driver, since)}, "refresh")
    # A second change: the nugget's grade.
    editor = driver.find_element(
        By.CSS_SELECTOR, f'#doc-nuggets [data-id="{nugget.pk}"]'
    )
    editor.find_element(By.NAME, "grade").send_keys("\ue015")  # Down: the next grade
    wait_for(lambda: Nugget.objects.get(pk=nugget.pk).grade is not None, "grade")
    wait_for(
        lambda: [p for p, _ in data_fetches(driver, since)].count(2) == 2,
        "refresh after the second change",
    )
    press(driver, "\ue00c")  # Escape leaves the field

    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "31", "second")
    # 31 was fetched before the nugget existed: shown at once, then brought up to date,
    # with the matcher's spans of the new nugget underlined in its text.
    wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, score).text == "1.00",
        "score of the new nugget in the next document",
    )
    wait_for(
        lambda: driver.find_elements(By.CSS_SELECTOR, "#doc-text .seg.match"),
        "matcher spans of the new nugget",
    )
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "12", "third")
    wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, score).text == "\u2013",
        "the new nugget, not found in this document",
    )
    wait_for(
        lambda: {5, 6} <= {p for p, _ in data_fetches(driver, since)},
        "the new neighbours",
    )

    # One request per nugget change and one per move to a document kept from before
    # the changes, plus the new neighbours: none of the kept documents (1, 3, 4) is
    # fetched again until shown, and each refresh starts after its document is shown.
    after = data_fetches(driver, since)
    assert sorted(p for p, _ in after) == [2, 2, 3, 4, 5, 6], after
    shown_at = driver.execute_script("return window.shownAt")
    for position, start in after:
        if position in (3, 4):
            assert start >= shown_at[str(position)], (position, after, shown_at)
