"""The researcher's pages as a new user meets them, in headless Chromium at 1280x800
and 1024x700: the default estimate first, one name per figure, tables that fit their
cards, readable selects, a comparison over common topics, and each warning once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.models import Qrels, QrelsEntry
from nuggets_app.pooling.services.simulated_assessors import simulated_user
from tests.browser.chrome import (
    keep_screenshot,
    login,
    misaligned_numbers,
    wait_for,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SIZES = [(1280, 800), (1024, 700)]


@pytest.fixture
def sized(driver, request):
    driver.set_window_size(*request.param)
    yield request.param
    driver.set_window_size(1280, 800)


def overflowing(driver) -> list[str]:
    """Tables wider than their card, cards wider than the page, and a page wider than
    the window: what a reader would have to scroll sideways to see."""
    return driver.execute_script(
        """
        const out = [];
        for (const table of document.querySelectorAll('table')) {
          const box = table.parentElement;
          if (table.getBoundingClientRect().width > box.clientWidth + 1)
            out.push(`table ${table.id || table.className}: ` +
                     `${Math.round(table.getBoundingClientRect().width)} px in ` +
                     `${box.clientWidth} px`);
        }
        for (const card of document.querySelectorAll('.card'))
          if (card.scrollWidth > card.clientWidth + 1)
            out.push(`card ${card.id || card.querySelector('h2')?.textContent}: ` +
                     `${card.scrollWidth} px in ${card.clientWidth} px`);
        if (document.documentElement.scrollWidth > window.innerWidth)
          out.push(`page ${document.documentElement.scrollWidth} px`);
        return out;
        """
    )


def tallest_row(driver, table_id: str) -> float:
    return driver.execute_script(
        "return Math.max(...Array.from(document.querySelectorAll("
        "`#${arguments[0]} tbody tr`)).map((r) => r.getBoundingClientRect().height));",
        table_id,
    )


def select_fits(driver, name: str) -> bool:
    """Whether the chosen option of the select ``name`` shows whole (its text is no
    wider than the box)."""
    return driver.execute_script(
        """
        const select = document.querySelector(`select[name="${arguments[0]}"]`);
        const canvas = document.createElement('canvas').getContext('2d');
        canvas.font = getComputedStyle(select).font;
        const text = select.options[select.selectedIndex].text;
        return canvas.measureText(text).width + 24 <= select.clientWidth;
        """,
        name,
    )


def header_words(driver, table_id: str) -> dict[str, tuple[str, str]]:
    """Each header of the table: its column's code name -> (its text, its tooltip)."""
    from selenium.webdriver.common.by import By

    return {
        th.get_attribute("data-column"): (
            th.text.replace("\n", " "),
            th.get_attribute("title") or "",
        )
        for th in driver.find_elements(By.CSS_SELECTOR, f"#{table_id} thead th")
    }


def broken_words(driver) -> list[str]:
    """Table headers and row names whose lines break inside a word: each line of a
    cell must end where a word ends (measured on the rendered text's line boxes)."""
    return driver.execute_script(
        r"""
        const bad = [];
        const cells = document.querySelectorAll(
          'table.progress thead th, table.progress tbody th');
        for (const cell of cells) {
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const range = document.createRange();
            let lastTop = null;
            for (let i = 0; i < node.data.length; i += 1) {
              range.setStart(node, i);
              range.setEnd(node, i + 1);
              const rect = range.getBoundingClientRect();
              if (rect.width === 0) continue;
              const next = lastTop !== null && rect.top > lastTop + 2;
              // A new line starting right after a letter or digit: a word was cut.
              if (next && /[\p{L}\p{N}_]/u.test(node.data[i - 1] || ''))
                bad.push(cell.textContent.trim());
              lastTop = rect.top;
            }
          }
        }
        return bad;
        """
    )


def first_number(
    driver, table_id: str = "table-model_assisted", column: str = "maAP"
) -> tuple[float, float]:
    """The top of the table's first cell of ``column`` (on the runs page, the first
    run's model-assisted MAP) and the window's inner height, in CSS pixels, the page
    not scrolled."""
    return driver.execute_script(
        r"""
        const [id, name] = arguments;
        window.scrollTo(0, 0);
        const table = document.getElementById(id);
        const heads = Array.from(table.querySelectorAll('thead th'));
        const column = heads.findIndex((th) => th.dataset.column === name);
        const cell = table.querySelector('tbody tr').children[column];
        if (!/^-?\d/.test(cell.textContent.trim())) throw new Error('not a number');
        return [cell.getBoundingClientRect().top, window.innerHeight];
        """,
        table_id,
        column,
    )


def _runs_url(world) -> str:
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    return f"{url}?sample={world.sample.pk}&expected={world.job.pk}&qrels=human"


@pytest.mark.parametrize("sized", SIZES, indirect=True)
def test_evaluate_runs_opens_on_the_default_estimate_and_fits(
    driver, live_server, fitted_world, staff, eager_tasks, sized
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    login(driver, live_server.url, staff.username)
    driver.get(f"{live_server.url}{_runs_url(world)}")
    wait_for(lambda: driver.find_element(By.ID, "table-model_assisted"), "the table")
    sections = [
        h.text for h in driver.find_elements(By.CSS_SELECTOR, "section.card > h2")
    ]
    assert sections[0] == "Model-assisted MAP (the default estimate)"
    assert sections[1:] == [
        "Standard measures under the chosen qrels",
        "statAP from the sample",
        "Expected measures under the job's relevance model",
    ]
    other = driver.find_element(By.ID, "other-estimates").text
    assert other.startswith("The tables below are there to check the default estimate")
    for name in ("Standard measures", "statAP", "Expected measures"):
        assert name in other
    # One name per figure: the cross-fitted model's EAP and the job's EAP differ.
    heads = {
        table: [
            th.get_attribute("data-column")
            for th in driver.find_elements(By.CSS_SELECTOR, f"#{table} thead th")
        ]
        for table in ("table-model_assisted", "table-expected")
    }
    assert "EAP_check" in heads["table-model_assisted"]
    assert "EAP" not in heads["table-model_assisted"]
    assert "EAP" in heads["table-expected"]
    assert "EAP_check" not in heads["table-expected"]
    assert "reason" not in heads["table-model_assisted"]  # listed below the table
    # Headers in words, the code name in the tooltip; no word cut in two.
    words = header_words(driver, "table-model_assisted")
    assert words["ci_high"] == ("95% high", "ci_high in the CSV")
    assert words["EAP_check"] == ("EAP check", "EAP_check in the CSV")
    assert words["model_only"] == ("model only", "model_only in the CSV")
    assert [name for name, (text, _) in words.items() if "_" in text] == []
    assert broken_words(driver) == []
    # The numbers before the method: the first estimate is above the fold, the
    # method folded under "How this is computed".
    top, height = first_number(driver)
    assert top < height, f"the first estimate at {top} px, the window {height} px"
    fold = driver.find_element(By.ID, "model-assisted-method")
    assert fold.tag_name == "details"
    assert fold.get_attribute("open") is None
    summary = fold.find_element(By.TAG_NAME, "summary")
    assert summary.text == "How this is computed"
    assert not driver.find_element(By.ID, "interval-note").is_displayed()
    summary.click()
    assert driver.find_element(By.ID, "interval-note").is_displayed()
    assert overflowing(driver) == []
    assert misaligned_numbers(driver) == []
    # A run's row is one or two lines, not a column of broken words.
    assert tallest_row(driver, "table-model_assisted") < 60
    # The rule select shows its chosen option whole, its description beside it.
    assert select_fits(driver, "kind")
    description = driver.find_element(
        By.CSS_SELECTOR, '[data-rule-description="default"]'
    )
    assert description.is_displayed()
    assert "p >= 0.5 with a fitted model" in description.text
    hidden = driver.find_element(By.CSS_SELECTOR, '[data-rule-description="top_n"]')
    assert not hidden.is_displayed()
    options = driver.find_elements(By.CSS_SELECTOR, 'select[name="expected"] option')
    assert f"Job {world.job.pk} " in options[1].text
    assert world.collection.name in options[1].text
    keep_screenshot(driver, f"evaluate-top-{sized[0]}x{sized[1]}")


def _partial_qrels(world) -> Qrels:
    """The imported qrels cut to topics 1-4: B judges fewer topics than A."""
    partial = Qrels.objects.create(collection=world.collection, name="first-four")
    QrelsEntry.objects.bulk_create(
        QrelsEntry(
            qrels=partial, topic_id=e.topic_id, document_id=e.document_id,
            relevance=e.relevance,
        )
        for e in QrelsEntry.objects.filter(
            qrels=world.qrels, topic__qid__in=["1", "2", "3", "4"]
        )
    )  # fmt: skip
    return partial


@pytest.mark.parametrize("sized", SIZES, indirect=True)
def test_compare_says_which_topics_it_compared_and_fits(
    driver, live_server, fitted_world, staff, eager_tasks, sized
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    partial = _partial_qrels(world)
    login(driver, live_server.url, staff.username)
    url = reverse("evaluation-page", args=[world.collection.pk, "compare"])
    query = f"qrels_a=qrels:{world.qrels.pk}&qrels_b=qrels:{partial.pk}&measure=AP"
    driver.get(f"{live_server.url}{url}?{query}")
    status = wait_for(
        lambda: driver.find_element(By.ID, "compared-topics"), "the topics"
    )
    assert status.text == (
        "Compared on the 4 topics both qrels judge; left out, judged only in A: 5, 6."
    )
    summary = driver.find_element(By.ID, "table-comparison_summary")
    head = [th.text for th in summary.find_elements(By.CSS_SELECTOR, "thead th")]
    cells = [td.text for td in summary.find_elements(By.CSS_SELECTOR, "tbody td")]
    assert dict(zip(head[1:], cells, strict=True))["topics"] == "4"
    top, height = first_number(driver, "table-comparison_summary", "kendall_tau")
    assert top < height, f"Kendall's tau at {top} px, the window {height} px"
    # Over the same four topics the same judgments give the same scores.
    for row in driver.find_elements(By.CSS_SELECTOR, "#table-comparison tbody tr"):
        score_a, score_b = (td.text for td in row.find_elements(By.TAG_NAME, "td")[:2])
        assert score_a == score_b
    assert overflowing(driver) == []
    assert misaligned_numbers(driver) == []
    keep_screenshot(driver, f"compare-{sized[0]}x{sized[1]}")


def test_compare_refuses_qrels_without_a_common_topic(
    driver, live_server, fitted_world, staff, eager_tasks
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    partial = _partial_qrels(world)
    other = Qrels.objects.create(collection=world.collection, name="last-two")
    QrelsEntry.objects.bulk_create(
        QrelsEntry(qrels=other, topic_id=e.topic_id, document_id=e.document_id,
                   relevance=e.relevance)
        for e in QrelsEntry.objects.filter(qrels=world.qrels, topic__qid__in=["5", "6"])
    )  # fmt: skip
    login(driver, live_server.url, staff.username)
    url = reverse("evaluation-page", args=[world.collection.pk, "compare"])
    query = f"qrels_a=qrels:{partial.pk}&qrels_b=qrels:{other.pk}&measure=AP"
    driver.get(f"{live_server.url}{url}?{query}")
    error = wait_for(lambda: driver.find_element(By.CSS_SELECTOR, ".error"), "error")
    assert "judge no topic in common (A: 1, 2, 3, 4; B: 5, 6)" in error.text
    assert not driver.find_elements(By.ID, "table-comparison")


@pytest.mark.parametrize("sized", SIZES, indirect=True)
def test_trust_and_verification_pages_fit_and_name_their_jobs(
    driver, live_server, fitted_world, staff, eager_tasks, sized
):
    from selenium.webdriver.common.by import By

    world = fitted_world
    simulated_user("simulated-assessor")
    login(driver, live_server.url, staff.username)
    url = reverse("evaluation-page", args=[world.collection.pk, "trust"])
    driver.get(f"{live_server.url}{url}?job={world.job.pk}&human=human")
    wait_for(lambda: driver.find_element(By.ID, "table-length_bias"), "length bias")
    assert overflowing(driver) == []
    assert misaligned_numbers(driver) == []
    assert select_fits(driver, "kind")
    job = driver.find_element(By.CSS_SELECTOR, 'select[name="job"] option').text
    assert job.startswith(f"Job {world.job.pk} ")
    assert world.collection.name in job
    driver.get(
        f"{live_server.url}{reverse('verification-create', args=[world.collection.pk])}"
    )
    labels = [
        label.text
        for label in driver.find_elements(By.CSS_SELECTOR, "#id_assessors label")
    ]
    assert labels
    assert "simulated-assessor" not in labels
    job = driver.find_element(By.CSS_SELECTOR, 'select[name="job"] option').text
    assert job.startswith(f"Job {world.job.pk} ")
    shown = [
        d.get_attribute("data-rule-description")
        for d in driver.find_elements(By.CSS_SELECTOR, "[data-rule-description]")
        if d.is_displayed()
    ]
    assert shown == ["default"]
    assert overflowing(driver) == []


@pytest.mark.parametrize("sized", SIZES, indirect=True)
def test_the_job_page_warns_once_and_keeps_lambda_by_its_button(
    driver, live_server, fitted_world, staff, sized
):
    from selenium.webdriver.common.by import By

    from nuggets_app.models import Judgment

    world = fitted_world
    # A topic of the job without a judged document: the job page warns of it.
    Judgment.objects.filter(topic=world.topics["6"]).delete()
    login(driver, live_server.url, staff.username)
    driver.get(f"{live_server.url}{reverse('job-detail', args=[world.job.pk])}")
    wait_for(lambda: driver.find_element(By.ID, "relevance-model"), "the job page")
    body = driver.find_element(By.TAG_NAME, "body").text
    # Said once (with nuggets or without, the sentence starts the same way).
    assert body.count("topics 6 have") == 1
    assert "Topics without a judged document" not in body
    lam = driver.find_element(By.ID, "lam")
    button = driver.find_element(
        By.CSS_SELECTOR, "form[data-action=rescore] button[type=submit]"
    )
    gap = button.rect["x"] - (lam.rect["x"] + lam.rect["width"])
    assert 0 <= gap < 40
    assert abs(button.rect["y"] - lam.rect["y"]) < 20
    assert select_fits(driver, "kind")
    assert overflowing(driver) == []
