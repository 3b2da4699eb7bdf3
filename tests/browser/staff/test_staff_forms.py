"""What a newcomer meets on the staff pages, in real headless Chromium: upload
problems told in the file's own format, a checked upload that says it awaits
confirmation, form errors once and at their field, a sample size past the pool said
and named, no simulated assessor offered for real work, topics named with their
collection and sample, and the sharing of nuggets as a sample's own setting.

The world: Cranfield's documents, topics and three runs loaded by the import services,
a depth-5 pool and a statAP sample of 3 per topic; a second small collection whose
topic 1 has the same qid; alice holds topic 1 of both."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.urls import reverse
from selenium.webdriver.common.by import By

from nuggets_app.models import Assignment, Collection, Run, Sample, TaskRecord
from nuggets_app.pooling.services.assignments import assignment_create
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw
from nuggets_app.pooling.services.simulated_assessors import simulated_user_mark
from nuggets_app.staff import services as staff_tasks
from tests import factories as f
from tests.browser.chrome import login, open_page, page_gone, screenshot, wait_for
from tests.integration.worlds.cranfield_files import load_cranfield

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
RED = "rgba(164, 0, 0, 1)"


@dataclass
class StaffSamples:
    """A collection with its pool and two samples: what the staff forms act on."""

    collection: Collection
    pool: object
    sample: Sample
    other_sample: Sample


@pytest.fixture
def world(staff, assessor, other_assessor, monkeypatch, settings, tmp_path):
    settings.DATA_DIR = tmp_path / "data"
    # The test runs the staff tasks itself: no broker traffic.
    monkeypatch.setattr(staff_tasks, "_enqueue", lambda task, phase: None)
    collection = Collection.objects.create(name="cranfield")
    load_cranfield(collection, runs=True)
    runs = Run.objects.filter(collection=collection)
    pool = pool_build(collection=collection, runs=runs, depth=5, name="p5")
    sample = sample_draw(pool=pool, size=3, method="statap", seed=1, name="s3")
    topic = collection.topics.get(qid="1")
    assignment_create(sample=sample, assessors=[assessor], topics=[topic])
    # Another collection whose topic 1 has the same qid and the same title.
    other = f.CollectionFactory(name="cranfield-copy")
    other_topic = f.TopicFactory(collection=other, qid="1", title=topic.title)
    other_sample = f.SampleFactory(pool=f.PoolFactory(collection=other), name="copy")
    f.SampleDocumentFactory(
        sample=other_sample,
        topic=other_topic,
        document=f.DocumentFactory(collection=other),
    )
    assignment_create(sample=other_sample, assessors=[assessor])
    return StaffSamples(collection, pool, sample, other_sample)


def _submit(driver, button_selector: str) -> None:
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, button_selector).click()
    wait_for(lambda: page_gone(old), "the next page")
    wait_for(
        lambda: driver.execute_script("return document.readyState") == "complete",
        "page loaded",
    )


def _upload_checked(driver, live_server, world, kind: str, path) -> None:
    """Upload ``path`` on the collection's ``kind`` page, run the task's check here
    (no worker) and show its outcome."""
    driver.get(
        live_server.url + reverse("staff-upload", args=[world.collection.name, kind])
    )
    driver.find_element(By.ID, "id_file").send_keys(str(path))
    _submit(driver, "#upload-form button[type=submit]")
    task = TaskRecord.objects.latest("pk")
    staff_tasks.staff_task_run(task_id=task.pk, phase="check")
    driver.refresh()


def _fill(driver, selector: str, value: str) -> None:
    field = driver.find_element(By.CSS_SELECTOR, selector)
    field.clear()
    field.send_keys(value)


def test_upload_problems_speak_the_files_format_and_a_checked_upload_waits(
    driver, live_server, world, tmp_path
):
    topics = tmp_path / "topics.jsonl"
    topics.write_text(
        '{"qid": "900", "title": "a"}\n{"qid": "901", "description": "no title"}\n'
    )
    login(driver, live_server.url, "root")
    _upload_checked(driver, live_server, world, "topics", topics)
    problems = wait_for(lambda: driver.find_element(By.ID, "problems").text, "problems")
    assert problems == 'topics.jsonl:2: missing field "title"'

    topics.write_text('{"qid": "900", "title": "a"}\n')
    _upload_checked(driver, live_server, world, "topics", topics)
    status = wait_for(
        lambda: driver.find_element(By.ID, "task-status").text, "task status"
    )
    assert status.startswith("awaits confirmation (until ")


def test_the_upload_pages_offer_the_commands_choices(driver, live_server, world):
    login(driver, live_server.url, "root")
    name = world.collection.name
    driver.get(live_server.url + reverse("staff-upload", args=[name, "documents"]))
    choice = driver.find_element(By.ID, "id_changed_text")
    assert [
        o.get_attribute("value") for o in choice.find_elements(By.TAG_NAME, "option")
    ] == [
        "refuse",
        "reanchor",
    ]
    driver.get(live_server.url + reverse("staff-upload", args=[name, "runs"]))
    skip = driver.find_element(By.ID, "id_skip_unknown_documents")
    assert skip.get_attribute("type") == "checkbox"


def test_a_field_error_sits_at_its_field_styled_as_an_error(driver, live_server, world):
    login(driver, live_server.url, "root")
    open_page(driver, live_server.url + reverse("staff-pool", args=[world.pool.pk]))
    _fill(driver, "#id_name", "bad")
    _fill(driver, "#id_size", "abc")
    _submit(driver, "#sample-draw")
    error = driver.find_element(By.ID, "id_size_error")
    assert error.text == "a whole number, or a percentage such as 10%"
    assert driver.execute_script(
        "const size = document.getElementById('id_size').closest('.field');"
        "const method = document.getElementById('id_method').closest('.field');"
        "const error = document.getElementById('id_size_error');"
        "return size.contains(error) && !method.contains(error);"
    )
    assert error.value_of_css_property("color") == RED
    assert driver.find_element(By.ID, "id_size").get_attribute("aria-invalid") == "true"
    screenshot(driver, "form-field-error")


def test_an_assign_error_is_shown_once(driver, live_server, world, other_assessor):
    login(driver, live_server.url, "root")
    driver.get(live_server.url + reverse("staff-sample", args=[world.sample.pk]))
    driver.find_element(
        By.CSS_SELECTOR, f"#assign-form input[value='{other_assessor.pk}']"
    ).click()
    _fill(driver, "#assign-form [name=topics]", "nope")
    _submit(driver, "#assign-form button[type=submit]")
    assert driver.page_source.count("unknown topics: nope") == 1
    alert = driver.find_element(By.CSS_SELECTOR, "#assign-form .form-errors")
    assert alert.get_attribute("role") == "alert"
    assert alert.text == "unknown topics: nope"


def test_a_size_past_the_pool_is_said_and_the_sample_named_for_what_it_holds(
    driver, live_server, world
):
    login(driver, live_server.url, "root")
    open_page(driver, live_server.url + reverse("staff-pool", args=[world.pool.pk]))
    _fill(driver, "#id_name", "all")
    _fill(driver, "#id_size", "500")
    _submit(driver, "#sample-preview")
    warning = driver.find_element(By.ID, "whole-pool").text
    assert warning.startswith("500 per topic is at least the largest topic pool (")
    assert warning.endswith("the sample holds the whole pool.")
    _submit(driver, "#sample-draw")
    assert "the sample holds the whole pool" in (
        driver.find_element(By.CSS_SELECTOR, ".messages").text
    )
    assert "the whole pool (500 per topic asked)" in (
        driver.find_element(By.TAG_NAME, "h1").text
    )
    task = TaskRecord.objects.latest("pk")
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    sample = Sample.objects.get(name="all")
    largest = max(draw["pool_size"] for draw in sample.draws.values())
    driver.get(live_server.url + reverse("staff-sample", args=[sample.pk]))
    assert driver.find_element(By.ID, "sample-size").text == (
        f"the whole pool (at most {largest} per topic; 500 per topic asked)"
    )


def test_simulated_assessors_are_not_offered_for_real_work(driver, live_server, world):
    # Marked by the simulation's group, not by a name: any name is left out.
    simulated_user_mark(f.UserFactory(username="helper-7"))
    f.UserFactory(username="carol")
    login(driver, live_server.url, "root")
    driver.get(live_server.url + reverse("staff-sample", args=[world.sample.pk]))
    offered = driver.find_element(By.ID, "assign-form").text
    assert "carol" in offered
    assert "helper-7" not in offered
    for name in ("source", "target"):
        options = driver.find_elements(
            By.CSS_SELECTOR, f"#reassign-form [name={name}] option"
        )
        names = {option.text for option in options}
        assert "carol" in names
        assert "helper-7" not in names


def test_topics_are_named_with_their_collection_and_sample(
    driver, live_server, world, assessor, other_assessor
):
    login(driver, live_server.url, "alice")
    driver.get(live_server.url + reverse("assessor-home"))
    rows = [
        row.text
        for row in driver.find_elements(By.CSS_SELECTOR, "table.progress tbody tr")
    ]
    assert len(rows) == 2
    assert any("cranfield s3" in row for row in rows), rows
    assert any("cranfield-copy copy" in row for row in rows), rows
    resume = driver.find_element(By.ID, "resume").text
    assert " of cranfield" in resume
    assert "(sample " in resume

    # Two assessors judged the same document of topic 1 in each collection.
    for sample in (world.sample, world.other_sample):
        item = sample.documents.first()
        for user in (assessor, other_assessor):
            f.JudgmentFactory(topic=item.topic, document=item.document, assessor=user)
    login(driver, live_server.url, "root")
    driver.get(live_server.url + reverse("agreement"))
    rows = [
        [cell.text for cell in row.find_elements(By.XPATH, "./*")]
        for row in driver.find_elements(By.CSS_SELECTOR, "table.progress tbody tr")
    ]
    # Collection, the samples giving the topic to both assessors, topic.
    both = {
        sample.pool.collection.name: ", ".join(
            sorted(
                {sample.name}
                & set(
                    Assignment.objects.filter(
                        sample=sample, topic=item.topic, assessor=other_assessor
                    ).values_list("sample__name", flat=True)
                )
            )
        )
        or "none in common"
        for sample in (world.sample, world.other_sample)
        for item in [sample.documents.first()]
    }
    assert [row[:3] for row in rows] == [
        ["cranfield", both["cranfield"], "1"],
        ["cranfield-copy", both["cranfield-copy"], "1"],
    ]


def test_sharing_nuggets_is_a_setting_of_the_sample(
    driver, live_server, world, assessor, other_assessor
):
    assert world.sample.nuggets_shared
    # Two assessors on one topic: agreement, so each works alone.
    assignment_create(
        sample=world.sample, assessors=[assessor, other_assessor], overlap=2
    )
    login(driver, live_server.url, "root")
    driver.get(live_server.url + reverse("staff-sample", args=[world.sample.pk]))
    section = driver.find_element(By.ID, "nuggets-shared").text
    assert "sees only their own nuggets" in section
    _submit(driver, "#nuggets-shared-toggle")
    assert (
        "see the nuggets others found"
        in driver.find_element(By.ID, "nuggets-shared").text
    )
    world.sample.refresh_from_db()
    assert world.sample.nuggets_shared
