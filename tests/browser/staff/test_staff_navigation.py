"""The staff and researcher pages in real headless Chromium, at 1024x700 and
1280x800: one navigation on every page (topics, jobs, the researcher dashboard,
agreement, collections, tasks, admin), what each page's task needs within the first
screen, no control shown once it no longer applies, and a screenshot of each page at
each size in ``test-artifacts/`` (``page-<name>-<width>x<height>.png``).

The world: Cranfield's documents, topics and three runs loaded by the import
services, a depth-5 pool, a statAP sample assigned to two assessors, a checked and a
refused run upload, and a matching job over three judged topics with aspects, its
relevance model fitted."""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from nuggets_app.collection.services.aspects import aspect_create
from nuggets_app.inference.services.job_model import job_model_fit
from nuggets_app.inference.services.matching import chunks, launch, match_job_launch
from nuggets_app.models import Collection, Nugget, Run, TaskRecord
from nuggets_app.pooling.services.assignments import assignment_create
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw
from nuggets_app.staff import services as staff_tasks
from tests.browser.chrome import (
    login,
    misaligned_numbers,
    open_page,
    screenshot,
    wait_for,
)
from tests.browser.judging.test_judging import press, select_text
from tests.integration.worlds.cranfield_files import RUNS, load_cranfield
from tests.integration.worlds.cranfield_pool import cranfield_world, run_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SIZES = ((1024, 700), (1280, 800))
# The staff navigation: link id -> URL name.
NAV = {
    "nav-topics": "assessor-home",
    "nav-jobs": "job-list",
    "nav-evaluation": "evaluation-index",
    "nav-agreement": "agreement",
    "nav-collections": "staff-collections",
    "nav-tasks": "staff-tasks",
    "nav-admin": "admin:index",
}


@dataclass
class Page:
    name: str
    url: str
    # What the page's task needs, within the first screen at every size.
    needs: tuple[str, ...] = ()
    # The navigation link of the section the page belongs to (aria-current).
    section: str = ""


@dataclass
class StaffPages:
    """Every staff page the navigation visits, with the job, topic and tasks they show."""

    pages: list[Page]
    job: object
    topic: object
    tasks: dict
    judge: str

    def page(self, name: str) -> Page:
        return next(p for p in self.pages if p.name == name)


@pytest.fixture
def world(
    shared_data, staff, assessor, other_assessor, monkeypatch, settings, tmp_path
):
    """Every staff page of a real world, and what the other tests look at."""
    settings.DATA_DIR = tmp_path / "data"
    # No broker traffic: the test runs the tasks and chunks itself.
    monkeypatch.setattr(staff_tasks, "_enqueue", lambda task, phase: None)
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)

    collection = Collection.objects.create(name="cranfield")
    load_cranfield(collection, runs=True)
    runs = Run.objects.filter(collection=collection)
    pool = pool_build(collection=collection, runs=runs, depth=5, name="p5")
    sample = sample_draw(pool=pool, size=3, method="statap", seed=1, name="s3")
    assignment_create(sample=sample, assessors=[assessor, other_assessor], overlap=2)
    lines = gzip.decompress(RUNS[0].read_bytes()).decode().splitlines()
    good = SimpleUploadedFile("extra.run", ("\n".join(lines[:40]) + "\n").encode())
    cols = lines[2].split()
    lines[2] = " ".join([*cols[:4], "high", *cols[5:]])
    bad = SimpleUploadedFile("broken.run", ("\n".join(lines[:40]) + "\n").encode())
    tasks = {}
    for name, upload in (("checked", good), ("refused", bad)):
        task = staff_tasks.upload_task_start(
            kind="runs", collection=collection, user=staff, files=[upload]
        )
        staff_tasks.staff_task_run(task_id=task.pk, phase="check")
        tasks[name] = TaskRecord.objects.get(pk=task.pk)
    assert (tasks["checked"].status, tasks["refused"].status) == ("checked", "refused")

    jobs = cranfield_world(
        shared_data, assessor, qids=("1", "2", "3"), per_topic=30, judge=14
    )
    topic = jobs.topics[0]
    for label in ("scale models", "heat transfer"):
        aspect_create(user=assessor, topic=topic, text=label)
    Nugget.objects.filter(topic=topic).update(aspect="scale-models")
    job = match_job_launch(
        collection=jobs.collection, topics=jobs.topics, source="pool", pool=jobs.pool
    )
    run_inline(job)
    job_model_fit(job=job)

    judged = assignment_create(sample=sample, assessors=[assessor])[0]
    for label in ("wind tunnel tests", "heated structures"):
        aspect_create(user=assessor, topic=judged.topic, text=label)

    name = collection.name
    pages = [
        Page("home", reverse("home")),
        Page("collections", reverse("staff-collections"),
             ("#collection-form button[type=submit]",), "nav-collections"),
        Page("collection", reverse("staff-collection", args=[name]),
             ("#upload-documents", "#pool-new"), "nav-collections"),
        Page("upload-runs", reverse("staff-upload", args=[name, "runs"]),
             ("#id_files", "#upload-form button[type=submit]"), "nav-collections"),
        Page("pool-new", reverse("staff-pool-new", args=[name]),
             ("#pool-form button[type=submit]",), "nav-collections"),
        Page("pool", reverse("staff-pool", args=[pool.pk]),
             ("#sample-preview", "#sample-draw"), "nav-collections"),
        Page("sample", reverse("staff-sample", args=[sample.pk]),
             ("#assign-form button[type=submit]",), "nav-collections"),
        Page("tasks", reverse("staff-tasks"), (), "nav-tasks"),
        Page("task-checked", reverse("staff-task", args=[tasks["checked"].pk]),
             ("#check-summary", "#task-confirm"), "nav-tasks"),
        Page("task-refused", reverse("staff-task", args=[tasks["refused"].pk]),
             ("#problems",), "nav-tasks"),
        Page("jobs", reverse("job-list"), (), "nav-jobs"),
        Page("job", reverse("job-detail", args=[job.pk]), (), "nav-jobs"),
        Page("job-topic", reverse("job-topic", args=[job.pk, topic.qid]),
             ("#rule-form button[type=submit]",), "nav-jobs"),
        Page("dashboard", reverse("evaluation-index"), (), "nav-evaluation"),
        Page("agreement", reverse("agreement"), (), "nav-agreement"),
    ]  # fmt: skip
    return StaffPages(
        pages=pages, job=job, topic=topic, tasks=tasks,
        judge=reverse("judge", args=[judged.pk, 1]),
    )  # fmt: skip


def _rect(driver, selector: str) -> dict:
    return driver.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,"
        " width: r.width, height: r.height};",
        selector,
    )


def _viewport(driver) -> tuple[int, int]:
    return tuple(driver.execute_script("return [innerWidth, innerHeight]"))


def _open(driver, url: str) -> None:
    driver.get(url)
    wait_for(
        lambda: driver.execute_script("return document.readyState") == "complete",
        f"{url} loaded",
    )


def _problems(driver, page: Page, where: str) -> list[str]:
    """What is wrong with the page shown: the navigation, sideways scrolling, what
    its task needs below the fold."""
    from selenium.webdriver.common.by import By

    problems = []
    view_w, view_h = _viewport(driver)
    bar = _rect(driver, "header.topbar")
    for link_id, url_name in NAV.items():
        links = driver.find_elements(By.ID, link_id)
        if not links or links[0].get_attribute("pathname") != reverse(url_name):
            problems.append(f"{where}: no {link_id} to {reverse(url_name)}")
            continue
        r = _rect(driver, f"#{link_id}")
        if (
            not links[0].is_displayed()
            or r["right"] > view_w
            or r["bottom"] > bar["bottom"]
        ):
            problems.append(f"{where}: {link_id} out of the top bar {r}")
    current = [
        a.get_attribute("id")
        for a in driver.find_elements(By.CSS_SELECTOR, ".topnav a[aria-current=page]")
    ]
    if current != ([page.section] if page.section else []):
        problems.append(f"{where}: section marked {current}, not {page.section!r}")
    wide = driver.execute_script("return document.documentElement.scrollWidth")
    if wide > view_w:
        problems.append(f"{where}: {wide}px wide in a {view_w}px window")
    for selector in page.needs:
        if not _in_view(driver, selector):
            r = _rect(driver, selector)
            problems.append(f"{where}: {selector} not in view ({r}, window {view_h})")
    return problems


def test_every_staff_page_has_one_navigation_and_its_task_in_the_first_screen(
    driver, live_server, world
):
    login(driver, live_server.url, "root")
    problems = []
    try:
        for width, height in SIZES:
            driver.set_window_size(width, height)
            for page in world.pages:
                _open(driver, live_server.url + page.url)
                problems += _problems(driver, page, f"{page.name} at {width}x{height}")
                screenshot(driver, f"page-{page.name}-{width}x{height}")
    finally:
        driver.set_window_size(1280, 800)
    assert not problems, "\n".join(problems)


def test_assessors_get_no_staff_navigation(driver, live_server, world):
    from selenium.webdriver.common.by import By

    login(driver, live_server.url, "alice")
    _open(driver, live_server.url + reverse("assessor-home"))
    assert not driver.find_elements(By.ID, "nav-jobs")
    assert not driver.find_elements(By.ID, "nav-collections")


def _in_view(driver, selector: str) -> bool:
    """Whether the element is in the window and not clipped: what is drawn at its
    centre is the element (or inside it)."""
    return driver.execute_script(
        "const el = document.querySelector(arguments[0]);"
        "if (!el) return false;"
        "const r = el.getBoundingClientRect();"
        "if (!r.height || r.bottom > innerHeight || r.right > innerWidth) return false;"
        "const hit = document.elementFromPoint((r.left + r.right) / 2,"
        " (r.top + r.bottom) / 2);"
        "return !!hit && (hit === el || el.contains(hit));",
        selector,
    )


def _shown(driver, selector: str) -> bool:
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, selector)
    return bool(found) and found[0].is_displayed()


def test_only_the_controls_that_apply_are_shown(driver, live_server, world):
    from selenium.webdriver.support.ui import Select

    login(driver, live_server.url, "root")
    # A checked upload waits for a choice, side by side: Import or Cancel; nothing
    # runs, so no progress bar.
    _open(
        driver,
        live_server.url + reverse("staff-task", args=[world.tasks["checked"].pk]),
    )
    assert _shown(driver, "#check #task-confirm")
    assert _shown(driver, "#check #task-cancel")
    assert not _shown(driver, "#task-progress progress")
    assert not _shown(driver, "#task-progress #task-cancel")
    # A refused one has nothing left to do but read its problems.
    _open(
        driver,
        live_server.url + reverse("staff-task", args=[world.tasks["refused"].pk]),
    )
    assert _shown(driver, "#problems")
    for gone in ("#task-confirm", "#task-cancel", "#task-progress progress"):
        assert not _shown(driver, gone), gone

    # A pool's runs are always listed, their boxes live only while "All runs" is
    # unticked; a sample's per-run quota is offered for statAP only.
    _open(driver, live_server.url + world.page("pool-new").url)
    boxes = driver.find_elements("css selector", "#pool-form [name=runs]")
    assert boxes
    assert all(b.is_displayed() and not b.is_enabled() for b in boxes)
    every = driver.find_element("css selector", "#pool-form label[for=id_all_runs]")
    assert every.text == "All runs of the collection"  # the box inside, no colon
    every.find_element("css selector", "[name=all_runs]").click()
    assert all(b.is_displayed() and b.is_enabled() for b in boxes)
    # Each box sits just before its own label text, on its line.
    for box in boxes:
        label = box.find_element("xpath", "./ancestor::label")
        assert label.text.strip()
        assert abs(box.rect["y"] - label.rect["y"]) < 12
    _open(driver, live_server.url + world.page("pool").url)
    method = Select(driver.find_element("css selector", "#sample-form [name=method]"))
    assert _shown(driver, "#sample-form [name=per_run_quota]")
    driver.find_element("css selector", "#sample-form [name=per_run_quota]").click()
    for value, offered in (("uniform", False), ("depth", False), ("statap", True)):
        method.select_by_value(value)
        quota = driver.find_element("css selector", "#sample-form [name=per_run_quota]")
        assert quota.is_displayed() == offered, value
        assert not quota.is_selected()

    # Decision rule forms show the fields their kind reads, and only those.
    wanted = {
        "probability": {"threshold"}, "threshold": {"threshold"},
        "top_n": {"n"}, "expected_f1": set(),
    }  # fmt: skip
    for url in (
        reverse("job-topic", args=[world.job.pk, world.topic.qid]),
        reverse("job-detail", args=[world.job.pk]),
    ):
        _open(driver, live_server.url + url)
        wait_for(lambda: driver.execute_script("return document.body.dataset.ready"),
                 "page script")  # fmt: skip
        form = "form[data-rule-form]"
        kind = Select(driver.find_element("css selector", f"{form} [name=kind]"))
        for value, fields in wanted.items():
            kind.select_by_value(value)
            for name in ("threshold", "n"):
                assert _shown(driver, f"{form} [name={name}]") == (name in fields), (
                    url, value, name,
                )  # fmt: skip


def test_reliability_diagrams_and_the_aspect_controls_fit_the_window(
    driver, live_server, world
):
    login(driver, live_server.url, "root")
    figures = {
        "job": (reverse("job-detail", args=[world.job.pk]), "#relevance-model figure"),
        "job-topic": (
            reverse("job-topic", args=[world.job.pk, world.topic.qid]),
            "#topic-model figure",
        ),
    }
    try:
        for width, height in SIZES:
            driver.set_window_size(width, height)
            for name, (url, selector) in figures.items():
                _open(driver, live_server.url + url)
                driver.execute_script(
                    "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
                    selector,
                )
                view_w, view_h = _viewport(driver)
                r = _rect(driver, selector)
                where = f"{name} at {width}x{height}"
                assert r["height"] > 0, where
                assert r["right"] <= view_w, (where, r)
                assert r["height"] <= view_h, (where, r)
                screenshot(driver, f"page-{name}-reliability-{width}x{height}")
            # The assessor's page: a new nugget's editor, with its aspect controls,
            # opens in view beside the document.
            login(driver, live_server.url, "alice")
            open_page(driver, live_server.url + world.judge)
            view_w, view_h = _viewport(driver)
            assert _rect(driver, "#doc-text")["top"] < view_h / 2
            assert _in_view(driver, "#make-nugget"), f"#make-nugget at {width}x{height}"
            words = driver.find_element("id", "doc-text").text.split()[:3]
            select_text(driver, " ".join(words))
            press(driver, "h")
            wait_for(lambda: _shown(driver, ".nugget-editor"), "the nugget editor")
            for selector in (
                ".nugget-editor textarea[name=text]",
                ".nugget-editor select[name=aspect]",
                ".nugget-editor button.new-aspect",
            ):
                assert _in_view(driver, selector), f"{selector} at {width}x{height}"
            screenshot(driver, f"page-judge-aspects-{width}x{height}")
            Nugget.objects.filter(assessor__username="alice").delete()
            login(driver, live_server.url, "root")
    finally:
        driver.set_window_size(1280, 800)


@pytest.mark.parametrize("size", SIZES)
def test_numbers_sit_right_and_a_checked_upload_says_until_when_it_waits(
    driver, live_server, world, size
):
    from selenium.webdriver.common.by import By

    from nuggets_app.operations.services.task_records import task_status_text

    driver.set_window_size(*size)
    try:
        login(driver, live_server.url, "root")
        for name in ("pool", "tasks", "agreement", "collection"):
            _open(driver, live_server.url + world.page(name).url)
            assert misaligned_numbers(driver) == [], name
            assert _problems(driver, world.page(name), name) == []
        # The task list says what the task page says: until when it waits.
        _open(driver, live_server.url + world.page("tasks").url)
        checked = world.tasks["checked"]
        cell = driver.find_element(
            By.XPATH,
            f"//tr[th/a[starts-with(normalize-space(), '#{checked.pk} ')]]/td[1]",
        )
        assert cell.text == task_status_text(task=checked)
        assert cell.text.startswith("awaits confirmation (until 20")
        login(driver, live_server.url, "alice")
        _open(driver, live_server.url + reverse("assessor-home"))
        cells = driver.find_elements(By.CSS_SELECTOR, "table.progress td.num")
        assert cells
        assert misaligned_numbers(driver) == []
        screenshot(driver, f"my-topics-{size[0]}x{size[1]}")
    finally:
        driver.set_window_size(1280, 800)
