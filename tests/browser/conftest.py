"""Fixtures of the browser tests: one headless Chromium per test module, the
researcher persona, staff tasks run by a real worker or in-process, computations run
inside the request, and the Cranfield world with its job's model fitted."""

import pytest

from tests.browser.chrome import chromium


@pytest.fixture(scope="module")
def driver():
    with chromium() as browser:
        yield browser


@pytest.fixture(autouse=True)
def page_left(request):
    """After each test the browser leaves its page, so that nothing the page sends
    on a timer (the clock, a prefetch) reaches the server while the database is
    emptied; the requests already sent are waited for by ``database_quiet``."""
    yield
    if "driver" in request.fixturenames:
        request.getfixturevalue("driver").get("about:blank")


@pytest.fixture
def researcher(db):
    from django.contrib.auth.models import Group

    from tests.factories import UserFactory

    user = UserFactory(username="carol")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


@pytest.fixture
def tasks_run(request):
    """With REDIS_URL the tasks go to a real Celery worker (one for the session, as
    in the integration tests); without, they run in-process."""
    from django.conf import settings

    if settings.REDIS_URL:
        return request.getfixturevalue("celery_worker")
    return None


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    from tests.integration import conftest

    yield from conftest.celery_worker.__wrapped__(
        django_db_setup, django_db_blocker, tmp_path_factory
    )


@pytest.fixture
def eager_tasks():
    """A page's computation runs inside the request (no worker in these tests)."""
    from nuggets_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def fitted_world(shared_data, assessor, monkeypatch):
    """The evaluation world (Cranfield, a pool, a sample, a finished job) with the
    job's relevance model fitted; the job's chunks run in this process, so a worker
    left by an earlier test cannot take them from the broker first."""
    from nuggets_app.inference.services import job_model
    from nuggets_app.inference.services.matching import chunks, launch
    from tests.integration.worlds.judged_job import evaluation_world

    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)
    world = evaluation_world(shared_data, assessor)
    job_model.features_cache_clear()
    job_model.job_model_fit(job=world.job)
    return world
