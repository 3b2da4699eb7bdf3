"""The judging page in real headless Chromium, as a new assessor meets it: keyboard
selection from where one reads, by word, sentence and paragraph; the layout at
1280x800 and 1024x700; highlights without bars; the focus after a delete; advancing on
grading with the time on the document; a warning for a nugget's twin."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from nuggets_app.models import AssessorPreference, Judgment, Nugget
from tests import factories as f
from tests.browser.chrome import keep_screenshot, login, open_page, wait_for
from tests.browser.judging.test_judging import PHRASE, press, select_text
from tests.integration.worlds.judging import TOPIC_1_DOCNOS, build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
By = pytest.importorskip("selenium.webdriver.common.by").By
# A word as a reader counts it: letters and digits, inner hyphens or apostrophes.
WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
LONG = len(TOPIC_1_DOCNOS) + 1  # the queue position of the long document


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    world = build_world(shared_data, assessor, other_assessor)
    # The seven Cranfield documents as the paragraphs of one long document.
    paragraphs = [world.docs[d].text.strip() for d in TOPIC_1_DOCNOS]
    text = "\n\n".join(paragraphs)
    long = f.DocumentFactory(collection=world.collection, docno="LONG", text=text)
    f.SampleDocumentFactory(
        sample=world.assignment.sample, topic=world.topic, document=long, order=LONG
    )
    world.extra.update(long=long, paragraphs=paragraphs)
    return world


def url(live_server, world, position: int) -> str:
    return live_server.url + reverse("judge", args=[world.assignment.pk, position])


def newest_nugget(assessor, count: int, driver=None) -> Nugget:
    """The assessor's newest nugget once there are ``count``; with ``driver``, also
    once the page has taken its answer (the selection it made is cleared then)."""
    wait_for(
        lambda: Nugget.objects.filter(assessor=assessor).count() == count,
        f"nugget {count}",
    )
    if driver is not None:
        wait_for(
            lambda: driver.execute_script("return window.getSelection().isCollapsed"),
            "the page to take the new nugget",
        )
    return Nugget.objects.filter(assessor=assessor).order_by("-pk").first()


def scroll_to_offset(driver, needle: str) -> None:
    """Scroll the window so that the line holding ``needle`` is the first in view."""
    driver.execute_script(
        """
        const root = document.getElementById('doc-text');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.data.indexOf(arguments[0]);
          if (at >= 0) {
            const range = document.createRange();
            range.setStart(node, at);
            range.setEnd(node, at + 1);
            window.scrollBy(0, range.getBoundingClientRect().top - 2);
            return;
          }
        }
        throw new Error('not found');
        """,
        needle,
    )


def test_keyboard_selection_starts_where_one_reads_and_jumps_by_sentence_and_paragraph(
    driver, live_server, world, assessor
):
    text = world.extra["long"].text
    paragraphs = world.extra["paragraphs"]
    fourth = text.index(paragraphs[3])
    login(driver, live_server.url, "alice")
    open_page(driver, url(live_server, world, LONG))
    scroll_to_offset(driver, paragraphs[3][:40])

    # s: the first whole sentence from the reading position, not from the top.
    press(driver, "s")
    press(driver, "h")
    first = newest_nugget(assessor, 1, driver)
    assert first.start == fourth
    assert first.span_text == paragraphs[3][: paragraphs[3].index(" .") + 2]

    # ]: the next paragraph's first sentence.
    press(driver, "]")
    press(driver, "h")
    second = newest_nugget(assessor, 2, driver)
    fifth = text.index(paragraphs[4])
    assert second.start == fifth
    assert second.span_text.endswith(".")
    assert "\n" not in second.span_text

    # v w w (the last nugget's selection is gone): three words from the reading
    # position, whatever punctuation lies between them.
    press(driver, "v")
    press(driver, "w")
    press(driver, "w")
    press(driver, "h")
    third = newest_nugget(assessor, 3, driver)
    assert third.start == fourth
    assert len(WORD.findall(third.span_text)) == 3
    assert text[third.start : third.end] == third.span_text

    # }: from a word to the end of its paragraph.
    press(driver, "v")
    press(driver, "}")
    press(driver, "h")
    fourth_nugget = newest_nugget(assessor, 4, driver)
    assert (fourth_nugget.start, fourth_nugget.end) == (
        fourth,
        fourth + len(paragraphs[3]),
    )

    # } again, at the end of the paragraph (its last sentence ends it): the selection
    # stays at the paragraph's end, not across the blank line into the next one.
    press(driver, "v")
    press(driver, "}")
    press(driver, "}")
    selected = driver.execute_script("return window.getSelection().toString()")
    assert selected.rstrip().endswith(paragraphs[3][-30:])
    assert paragraphs[4][:20] not in selected


def _fits(driver, select) -> tuple[float, float]:
    """The width of the select's chosen text and the width it has for text."""
    return driver.execute_script(
        """
        const s = arguments[0];
        const cs = getComputedStyle(s);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
        const width = ctx.measureText(s.options[s.selectedIndex].text).width;
        const room = s.clientWidth - parseFloat(cs.paddingLeft)
          - parseFloat(cs.paddingRight) - 20;  // the arrow
        return [width, room];
        """,
        select,
    )


def _in_view(driver, element) -> bool:
    """Wholly inside the window and not clipped by a scrolling ancestor."""
    return driver.execute_script(
        """
        const el = arguments[0];
        const r = el.getBoundingClientRect();
        if (r.top < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth)
          return false;
        for (let p = el.parentElement; p; p = p.parentElement) {
          const box = p.getBoundingClientRect();
          const cs = getComputedStyle(p);
          if (cs.overflowY !== 'visible' && (r.bottom > box.bottom + 1 || r.top < box.top - 1))
            return false;
        }
        return true;
        """,
        element,
    )


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_the_page_fits_with_a_nugget_editor_open(
    driver, live_server, world, assessor, size
):
    login(driver, live_server.url, "alice")
    driver.set_window_size(*size)
    try:
        open_page(driver, url(live_server, world, 1))
        press(driver, "2")
        select_text(driver, PHRASE)
        press(driver, "h")
        newest_nugget(assessor, 1)
        editor = wait_for(
            lambda: driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "editor"
        )[0]
        # The longest grade label, and an aspect (set as a choice would set them; the
        # aspect select's options are refilled when the nugget's change comes back).
        driver.execute_script(
            """const [grade, aspect] = arguments;
            grade.selectedIndex = grade.options.length - 1;
            aspect.value = 'a1';
            for (const s of [grade, aspect]) s.dispatchEvent(new Event('input'));""",
            editor.find_element(By.NAME, "grade"),
            editor.find_element(By.NAME, "aspect"),
        )
        wait_for(
            lambda: Nugget.objects.filter(assessor=assessor, aspect="a1").exists(),
            "grade and aspect saved",
        )
        for name in ("grade", "aspect"):
            width, room = _fits(driver, editor.find_element(By.NAME, name))
            assert width <= room, (name, size, width, room)
        keep_screenshot(driver, f"judge-{size[0]}x{size[1]}")
        count = driver.find_element(By.ID, "judged-count")
        assert count.text == "1"
        assert _in_view(driver, count.find_element(By.XPATH, "..")), size
        # The topic reads in full: no scroll box around its statement.
        panel = driver.find_element(By.CSS_SELECTOR, ".topic-panel")
        assert driver.execute_script(
            "const p = arguments[0]; return p.scrollHeight <= p.clientHeight + 1", panel
        ), size
    finally:
        driver.set_window_size(1280, 800)


def _row_colours(driver, nugget_id: int) -> list[set]:
    """Per line of a nugget's highlight, the colours of the pixel row just inside its
    top edge (the glyphs start lower), from a screenshot."""
    import io

    from PIL import Image

    lines = driver.execute_script(
        """
        const segs = document.querySelectorAll(`#doc-text .seg[data-n~="${arguments[0]}"]`);
        const lines = {};
        for (const seg of segs) for (const r of seg.getClientRects()) {
          const key = Math.round(r.top);
          const line = lines[key] || (lines[key] = [r.left, r.right, r.top]);
          line[0] = Math.min(line[0], r.left);
          line[1] = Math.max(line[1], r.right);
        }
        return [Object.values(lines), window.devicePixelRatio];
        """,
        nugget_id,
    )
    boxes, ratio = lines
    image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
    out = []
    for left, right, top in boxes:
        y = round((top + 2) * ratio)
        xs = range(round((left + 1) * ratio), round((right - 1) * ratio))
        out.append({image.getpixel((x, y)) for x in xs})
    return out


def test_a_focused_nugget_is_one_band_without_bars_between_segments(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, url(live_server, world, 1))
    outer = "the parameters to be satisfied for thermo-aeroelastic similarity"
    select_text(driver, outer)
    press(driver, "h")
    nugget = newest_nugget(assessor, 1)
    # A second nugget inside the first splits its highlight into segments.
    select_text(driver, PHRASE)
    press(driver, "h")
    newest_nugget(assessor, 2)
    segments = wait_for(
        lambda: (
            driver.find_elements(By.CSS_SELECTOR, f'.seg[data-n~="{nugget.pk}"]')[1:]
            and driver.find_elements(By.CSS_SELECTOR, f'.seg[data-n~="{nugget.pk}"]')
        ),
        "the highlight in two segments",
    )
    editor = driver.find_element(
        By.CSS_SELECTOR, f'#doc-nuggets [data-id="{nugget.pk}"]'
    )
    driver.execute_script(
        "arguments[0].focus({preventScroll: true})",
        editor.find_element(By.NAME, "text"),
    )
    wait_for(lambda: "focus" in segments[0].get_attribute("class"), "focused")
    driver.execute_script("window.getSelection().removeAllRanges()")
    for colours in _row_colours(driver, nugget.pk):
        assert len(colours) == 1, colours


@pytest.mark.parametrize("size", [(1280, 800), (1024, 700)])
def test_a_matched_spans_line_runs_on_across_segment_joins(
    driver, live_server, world, assessor, size
):
    import io

    from PIL import Image

    driver.set_window_size(*size)
    try:
        login(driver, live_server.url, "alice")
        open_page(driver, url(live_server, world, 1))
        select_text(driver, PHRASE)
        press(driver, "h")
        nugget = newest_nugget(assessor, 1)
        seg = wait_for(
            lambda: driver.find_element(
                By.CSS_SELECTOR, f'.seg[data-n~="{nugget.pk}"]'
            ),
            "the nugget's segment",
        )
        # A matcher span over the nugget and the text either side: three segments.
        lines = driver.execute_script(
            """
            const seg = arguments[0];
            const run = [seg.previousElementSibling, seg, seg.nextElementSibling];
            window.getSelection().removeAllRanges();
            seg.scrollIntoView({block: 'center'});
            for (const s of run) s.classList.add('match');
            const lines = {};
            for (const s of run) for (const r of s.getClientRects()) {
              if (r.top < 0 || r.bottom + 2 >= window.innerHeight) continue;
              const line = lines[Math.round(r.bottom)] ||= [r.left, r.right, r.bottom];
              line[0] = Math.min(line[0], r.left);
              line[1] = Math.max(line[1], r.right);
            }
            return [Object.values(lines), window.devicePixelRatio];
            """,
            seg,
        )
        boxes, ratio = lines
        assert len(boxes) >= 2  # the span runs over more than one line
        image = Image.open(io.BytesIO(driver.get_screenshot_as_png())).convert("RGB")
        for left, right, bottom in boxes:
            y = round((bottom + 1) * ratio)
            xs = range(round((left + 1) * ratio), round((right - 1) * ratio))
            assert {image.getpixel((x, y)) for x in xs} == {(0x2B, 0x8A, 0x3E)}
    finally:
        driver.set_window_size(1280, 800)


def test_after_deleting_a_nugget_by_keyboard_the_focus_is_on_the_document(
    driver, live_server, world, assessor
):
    login(driver, live_server.url, "alice")
    open_page(driver, url(live_server, world, 1))
    select_text(driver, PHRASE)
    press(driver, "h")
    newest_nugget(assessor, 1)
    delete = wait_for(
        lambda: driver.find_element(By.CSS_SELECTOR, ".nugget-editor .delete"),
        "delete button",
    )
    driver.execute_script("arguments[0].focus()", delete)
    press(driver, "\ue007")  # Enter on the focused Delete button
    wait_for(
        lambda: not driver.find_elements(By.CSS_SELECTOR, ".nugget-editor"), "deleted"
    )
    assert driver.execute_script("return document.activeElement.id") == "doc-text"
    # The shortcuts go on from there.
    press(driver, "j")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "next")


def test_grading_advances_when_the_assessor_chose_it_and_the_clock_shows_the_time(
    driver, live_server, world, assessor
):
    Judgment.objects.create(
        assessor=assessor, topic=world.topic, document=world.docs["29"],
        relevance=None, active_seconds=75,
    )  # fmt: skip
    login(driver, live_server.url, "alice")
    open_page(driver, url(live_server, world, 1))
    clock = driver.find_element(By.ID, "doc-clock")
    wait_for(lambda: clock.text not in ("", "0:00"), "the clock running")
    assert re.fullmatch(r"0:\d\d", clock.text)
    # Off by default: a grade stays on the document.
    press(driver, "1")
    wait_for(
        lambda: Judgment.objects.filter(assessor=assessor, relevance=1).exists(),
        "first grade",
    )
    assert driver.find_element(By.ID, "docno").text == "184"

    driver.find_element(By.ID, "advance-toggle").click()
    wait_for(
        lambda: AssessorPreference.objects.filter(
            user=assessor, advance_on_grade=True
        ).exists(),
        "preference saved",
    )
    press(driver, "2")
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "29", "advanced")
    wait_for(
        lambda: Judgment.objects.filter(
            assessor=assessor, document=world.docs["184"], relevance=2
        ).exists(),
        "grade of the document left",
    )
    # 29 was worked on for 75 s before: its clock goes on from there.
    minutes, seconds = map(int, clock.text.split(":"))
    assert 60 * minutes + seconds >= 75

    # The preference is the assessor's: kept across a reload, toggled with "a".
    driver.refresh()
    wait_for(lambda: driver.execute_script("return document.body.dataset.ready"), "re")
    assert driver.find_element(By.ID, "advance-toggle").is_selected()
    press(driver, "a")
    wait_for(
        lambda: not AssessorPreference.objects.get(user=assessor).advance_on_grade,
        "preference off",
    )


def test_a_nugget_with_the_text_of_another_is_saved_with_a_warning(
    driver, live_server, world, assessor, other_assessor
):
    doc = world.docs["29"]
    f.NuggetFactory(
        topic=world.topic, assessor=other_assessor, document=doc,
        start=0, end=len(doc.text.split(" .")[0]), text=PHRASE,
    )  # fmt: skip
    login(driver, live_server.url, "alice")
    open_page(driver, url(live_server, world, 1))
    select_text(driver, PHRASE)
    press(driver, "h")
    newest_nugget(assessor, 1)
    status = driver.find_element(By.ID, "save-status")
    wait_for(lambda: status.get_attribute("data-kind") == "warning", "warning")
    assert "the same text as nugget" in status.text
    assert "(bob)" in status.text
