"""A sample in two rounds in real headless Chromium: the admin asks for a budget per
topic and two rounds on the pool page, assigns the topics, the assessor judges round 1,
the next round (drawn by the Celery task with the relevance model) joins the end of the
assessor's queues without touching the judged positions, the assessor judges it, and
the admin's sample page shows both rounds judged with their intervals."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.models import Assignment, Judgment, Sample, SampleDocument
from nuggets_app.pooling.services.pools import pool_build
from tests import factories as f
from tests.browser.chrome import login, open_page, screenshot, wait_for
from tests.browser.staff.test_staff_pages import by_id, fill, submit, task_status
from tests.integration.pooling.test_pools import make_runs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORDS = [
    "wing",
    "flow",
    "heat",
    "boundary",
    "layer",
    "pressure",
    "shock",
    "plate",
    "cone",
    "nozzle",
]


def world():
    docnos = [f"d{i:02d}" for i in range(12)]
    collection, runs = make_runs(
        {
            "1": {"run1": docnos[:10], "run2": docnos[::-1][:10]},
            "2": {"run1": docnos[2:], "run2": docnos[:8]},
        }
    )
    for i, document in enumerate(collection.documents.order_by("docno")):
        document.text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(30))
        document.save(update_fields=["text"])
    return pool_build(collection=collection, runs=runs, depth=10, name="p10")


def judge_queue(driver, base: str, assignment: Assignment, start: int, end: int):
    """Grade positions ``start..end`` of the assignment's queue in the page."""
    from selenium.webdriver.common.by import By

    for position in range(start, end + 1):
        open_page(driver, base + reverse("judge", args=[assignment.pk, position]))
        driver.find_element(
            By.CSS_SELECTOR, f"button.grade[data-grade='{position % 2}']"
        ).click()
        wait_for(
            lambda p=position: Judgment.objects.filter(
                assessor=assignment.assessor,
                topic=assignment.topic,
                document__in=SampleDocument.objects.filter(
                    sample=assignment.sample, topic=assignment.topic, order=p
                ).values("document"),
                relevance__isnull=False,
            ).exists(),
            f"judgment at position {position}",
        )


def progress_line(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, ".progress-line").text


def test_two_rounds_from_the_admin_page_to_the_assessors_queue_and_back(
    driver, live_server, tasks_run
):
    from selenium.webdriver.common.by import By

    base = live_server.url
    pool = world()
    f.UserFactory(username="admin", is_staff=True, is_superuser=True)
    alice = f.UserFactory(username="alice")

    # The admin asks for 4 documents per topic in 2 rounds on the pool page.
    login(driver, base, "admin")
    driver.get(f"{base}{reverse('staff-pool', args=[pool.pk])}")
    wait_for(lambda: driver.find_elements(By.ID, "sample-form"), "pool page")
    fill(driver, "id_name", "r2")
    fill(driver, "id_size", "4")
    fill(driver, "id_seed", "3")
    fill(driver, "id_rounds", "2")
    submit(driver, "sample-form", "#sample-draw")
    task_status(driver, {"done"})
    by_id(driver, "result-link").click()
    wait_for(lambda: driver.find_elements(By.ID, "rounds"), "sample page")
    sample = Sample.objects.get(pool=pool, name="r2")
    assert (sample.rounds, sample.rounds_drawn, sample.size) == (2, 1, 4)
    assert "1 of 2 rounds drawn" in by_id(driver, "rounds-status").text
    driver.find_element(
        By.CSS_SELECTOR, f"#assign-form input[name=assessors][value='{alice.pk}']"
    ).click()
    submit(driver, "assign-form")
    assignments = list(
        Assignment.objects.filter(sample=sample).select_related("topic", "sample")
    )
    assert len(assignments) == 2
    screenshot(driver, "rounds-sample-round1")

    # Round 1's queues, before anything is judged.
    before = {
        a.pk: list(
            SampleDocument.objects.filter(sample=sample, topic=a.topic)
            .order_by("order")
            .values_list("document_id", flat=True)
        )
        for a in assignments
    }
    assert [len(q) for q in before.values()] == [2, 2]

    # The assessor judges round 1: two documents per topic.
    login(driver, base, "alice")
    judge_queue(driver, base, assignments[0], 1, 2)
    # one topic judged is not the round judged: no new documents yet
    assert Sample.objects.get(pk=sample.pk).rounds_drawn == 1
    judge_queue(driver, base, assignments[1], 1, 2)

    # The last grade queued the next round; it joins the end of each queue.
    wait_for(
        lambda: Sample.objects.get(pk=sample.pk).rounds_drawn == 2,
        "round 2 drawn",
        timeout=60,
    )
    for assignment in assignments:
        queue = list(
            SampleDocument.objects.filter(sample=sample, topic=assignment.topic)
            .order_by("order")
            .values_list("document_id", "round")
        )
        assert [d for d, _ in queue[:2]] == before[assignment.pk]
        assert [r for _, r in queue] == [1, 1, 2, 2]
        open_page(driver, base + reverse("judge", args=[assignment.pk, 1]))
        assert progress_line(driver) == "Judged 2 of 4"
    screenshot(driver, "rounds-assessor-queue-grown")
    for assignment in assignments:
        judge_queue(driver, base, assignment, 3, 4)

    # Back on the admin's sample page: both rounds judged, with their intervals.
    login(driver, base, "admin")
    driver.get(f"{base}{reverse('staff-sample', args=[sample.pk])}")
    wait_for(lambda: driver.find_elements(By.ID, "rounds"), "sample page")
    assert "2 of 2 rounds drawn" in by_id(driver, "rounds-status").text
    rows = driver.find_elements(By.CSS_SELECTOR, "#rounds tbody tr")
    cells = [[c.text for c in r.find_elements(By.TAG_NAME, "td")] for r in rows]
    assert [c[:2] for c in cells] == [["4", "4"], ["4", "4"]]
    widths = [float(c[3]) for c in cells]
    assert all(w >= 0 for w in widths)
    assert not driver.find_elements(By.ID, "round-form")
    screenshot(driver, "rounds-sample-both-judged")
