"""Semantic evidence on the judging page in real headless Chromium: each topic nugget
quotes the document's sentence nearest in meaning, from stored embeddings, on load and
after a move without a page load (the real packaged model; skipped without the extra)."""

from __future__ import annotations

import pytest

from tests import factories as f
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.browser.judging.test_judging import doc_url, press
from tests.integration.worlds.judging import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
By = pytest.importorskip("selenium.webdriver.common.by").By


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def test_topic_nuggets_show_the_nearest_sentence_of_each_document(
    driver, live_server, world, assessor, other_assessor
):
    """Semantic evidence from stored embeddings: shown for the document on load and
    for the next one after a move (without a page load); none where nothing is stored."""
    from nuggets_app.inference.services.embeddings import (
        documents_embed,
        nuggets_embed,
        stored_nearest,
    )
    from nuggets_app.learning import embeddings

    if not embeddings.semantic_available():
        pytest.skip(embeddings.OFF_MESSAGE)
    text = "wind tunnel models must be geometrically similar to the aircraft"
    nugget = f.NuggetFactory(
        topic=world.topic, document=world.docs["31"], assessor=other_assessor,
        start=0, end=10, text=text, keywords=[],
    )  # fmt: skip
    nuggets_embed(nugget_ids=[nugget.pk])
    documents_embed([world.docs["184"], world.docs["29"]], max_words=60)
    login(driver, live_server.url, "alice")
    open_page(driver, doc_url(live_server, world, 1))
    for docno in ("184", "29"):
        want = stored_nearest(document=world.docs[docno], nugget_ids=[nugget.pk])[
            nugget.pk
        ]
        item = f'#topic-nuggets li[data-id="{nugget.pk}"] .nearest'
        wait_for(
            lambda item=item, want=want: driver.execute_script(
                "const e = document.querySelector(arguments[0]);"
                "return e && !e.hidden && e.dataset.span === arguments[1]",
                item,
                f"{want['start']}-{want['end']}",
            ),
            f"nearest sentence of {docno}",
        )
        shown = driver.find_element(By.CSS_SELECTOR, item)
        assert f"≈ {want['similarity']:.2f}" in shown.text
        quoted = driver.find_element(By.CSS_SELECTOR, f"{item} q")
        assert quoted.get_attribute("textContent") == want["sentence"]
        screenshot(driver, f"judge-semantic-{docno}")
        press(driver, "j")
    # Document 31 has no stored windows: its list shows the score alone.
    wait_for(lambda: driver.find_element(By.ID, "docno").text == "31", "third")
    hidden = driver.execute_script(
        "return document.querySelector(arguments[0]).hidden",
        f'#topic-nuggets li[data-id="{nugget.pk}"] .nearest',
    )
    assert hidden is True
