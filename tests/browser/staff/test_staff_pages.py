"""An admin's day in real headless Chromium, from an empty database: create the
collection, upload Cranfield's documents, topics, qrels and three real runs (check, then
confirm), see a malformed run refused line by line with nothing written, build a pool,
draw a statAP sample, assign two assessors with overlap 2, and see their queues."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from nuggets_app.importers import parse_collection, parse_run, parse_topics
from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    Pool,
    QrelsEntry,
    Run,
    RunEntry,
    Sample,
    SampleDocument,
    Topic,
)
from tests import factories as f
from tests.browser.chrome import login, page_gone, screenshot, wait_for
from tests.integration.worlds.cranfield_files import CRANFIELD, RUNS, broken_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def by_id(driver, element_id: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def fill(driver, element_id: str, value: str) -> None:
    field = by_id(driver, element_id)
    field.clear()
    field.send_keys(value)


def submit(driver, form_id: str, button: str = "button[type=submit]") -> None:
    from selenium.webdriver.common.by import By

    form = by_id(driver, form_id)
    old = driver.find_element(By.TAG_NAME, "html")
    form.find_element(By.CSS_SELECTOR, button).click()
    wait_for(lambda: page_gone(old), "next page")


def task_status(driver, wanted: set[str], timeout: float = 120.0) -> str:
    """Wait on a task page until its status is one of ``wanted`` (the page reloads)."""
    return wait_for(
        lambda: (
            (s := by_id(driver, "task-status").get_attribute("data-status")) in wanted
            and s
        ),
        f"task status in {wanted}",
        timeout=timeout,
    )


def upload_and_import(driver, base: str, kind: str, files: list[Path], **fields) -> str:
    driver.get(f"{base}{reverse('staff-upload', args=['cranfield', kind])}")
    file_input = by_id(driver, "id_files" if kind == "runs" else "id_file")
    file_input.send_keys("\n".join(str(path) for path in files))
    for name, value in fields.items():
        fill(driver, f"id_{name}", value)
    submit(driver, "upload-form")
    assert task_status(driver, {"checked", "refused"}) == "checked", by_id(
        driver, "check"
    ).text
    summary = by_id(driver, "check-summary").text
    old = by_id(driver, "task-confirm")
    old.click()
    wait_for(lambda: page_gone(old), "import page")
    task_status(driver, {"done", "failed"})
    assert by_id(driver, "task-error").text == ""
    return summary


def test_admin_loads_cranfield_pools_samples_and_assigns_in_the_browser(
    driver, live_server, tasks_run, tmp_path
):
    from selenium.webdriver.common.by import By

    base = live_server.url
    f.UserFactory(username="admin", is_staff=True, is_superuser=True)
    alice = f.UserFactory(username="alice")
    bob = f.UserFactory(username="bob")
    login(driver, base, "admin")

    # The site navigation leads staff to the collections; create one.
    by_id(driver, "nav-collections").click()
    wait_for(lambda: driver.find_elements(By.ID, "collection-form"), "collections")
    fill(driver, "id_name", "cranfield")
    submit(driver, "collection-form")
    assert "Upload the documents" in by_id(driver, "next-steps").text
    screenshot(driver, "staff-empty-collection")

    summary = upload_and_import(driver, base, "documents", [CRANFIELD / "docs.trec.gz"])
    documents = sum(1 for _ in parse_collection(CRANFIELD / "docs.trec.gz"))
    assert f"Documents\n{documents}" in summary
    assert Document.objects.count() == documents

    upload_and_import(driver, base, "topics", [CRANFIELD / "topics.trec"])
    assert Topic.objects.count() == sum(
        1 for _ in parse_topics(CRANFIELD / "topics.trec")
    )

    upload_and_import(
        driver, base, "qrels", [CRANFIELD / "qrels.txt"], name="cranqrels"
    )
    qrels_lines = len((CRANFIELD / "qrels.txt").read_text().splitlines())
    assert QrelsEntry.objects.count() == qrels_lines

    upload_and_import(driver, base, "runs", RUNS)
    run_lines = sum(1 for path in RUNS for _ in parse_run(path))
    assert Run.objects.count() == len(RUNS)
    assert RunEntry.objects.count() == run_lines
    screenshot(driver, "staff-runs-imported")

    # A malformed run: every problem as FILE:LINE, no import button, nothing written.
    driver.get(f"{base}{reverse('staff-upload', args=['cranfield', 'runs'])}")
    by_id(driver, "id_files").send_keys(str(broken_run(tmp_path)))
    submit(driver, "upload-form")
    task_status(driver, {"refused"})
    problems = by_id(driver, "problems").text.splitlines()
    assert [line.split(": ")[0] for line in problems] == [
        "broken.run:3",
        "broken.run:5",
        "broken.run:7",
    ]
    assert "unknown document" in problems[2]
    assert not driver.find_elements(By.ID, "task-confirm")
    assert Run.objects.count() == len(RUNS)
    assert RunEntry.objects.count() == run_lines
    screenshot(driver, "staff-malformed-run")

    # A depth-10 pool of all runs, from the collection page.
    driver.get(f"{base}{reverse('staff-collection', args=['cranfield'])}")
    by_id(driver, "pool-new").click()
    wait_for(lambda: driver.find_elements(By.ID, "pool-form"), "pool form")
    fill(driver, "id_name", "p10")
    fill(driver, "id_depth", "10")
    submit(driver, "pool-form")
    task_status(driver, {"done"})
    by_id(driver, "result-link").click()
    wait_for(lambda: driver.find_elements(By.ID, "sample-form"), "pool page")
    pool = Pool.objects.get(name="p10")
    assert pool.runs.count() == len(RUNS)

    # A statAP sample of 5 per topic: preview the sizes, then draw.
    fill(driver, "id_name", "s5")
    fill(driver, "id_size", "5")
    fill(driver, "id_seed", "7")
    submit(driver, "sample-form", "#sample-preview")
    screenshot(driver, "staff-pool-preview")
    rows = driver.find_elements(By.CSS_SELECTOR, "#topic-sizes tbody tr")
    assert len(rows) == 20
    for row in rows:
        pool_size, _single, would = (
            int(c.text) for c in row.find_elements(By.TAG_NAME, "td")
        )
        assert would == min(5, pool_size)
    submit(driver, "sample-form", "#sample-draw")
    task_status(driver, {"done"})
    by_id(driver, "result-link").click()
    wait_for(lambda: driver.find_elements(By.ID, "assign-form"), "sample page")
    sample = Sample.objects.get(pool=pool, name="s5")
    assert (sample.method, sample.size, sample.seed) == ("statap", 5, 7)
    assert SampleDocument.objects.filter(sample=sample).count() == 20 * 5

    # Two assessors, overlap 2: both get every topic.
    for user in (alice, bob):
        driver.find_element(
            By.CSS_SELECTOR, f"#assign-form input[name=assessors][value='{user.pk}']"
        ).click()
    fill(driver, "id_overlap", "2")
    submit(driver, "assign-form")
    table = by_id(driver, "assessor-progress")
    for name in ("alice", "bob"):
        row = table.find_element(By.CSS_SELECTOR, f"tr[data-assessor={name}]")
        assert row.find_elements(By.TAG_NAME, "td")[2].text == "0 / 100"
    screenshot(driver, "staff-sample-assigned")

    # Each assessor sees their own queue: the 20 sampled topics.
    for user in (alice, bob):
        login(driver, base, user.username)
        wait_for(lambda: "/assess/" in driver.current_url, "assessor home")
        shown = [
            th.text.split(":")[0]
            for th in driver.find_elements(By.CSS_SELECTOR, "table.progress tbody th")
        ]
        mine = Assignment.objects.filter(assessor=user).values_list(
            "topic__qid", flat=True
        )
        assert sorted(shown) == sorted(mine)
        assert len(shown) == 20
    assert Collection.objects.count() == 1
