"""Fixtures of the evaluation tests: the Cranfield world and a researcher persona."""

import pytest
from django.contrib.auth.models import Group

from tests.factories import UserFactory
from tests.integration.worlds.judged_job import evaluation_world


@pytest.fixture
def world(shared_data, assessor):
    return evaluation_world(shared_data, assessor)


@pytest.fixture
def fitted(world):
    """The world with its job's relevance model fitted."""
    from nuggets_app.inference.services import job_model

    job_model.features_cache_clear()
    job_model.job_model_fit(job=world.job)
    return world


@pytest.fixture
def researcher(db):
    user = UserFactory(username="carol")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


@pytest.fixture(autouse=True)
def tasks_in_process():
    """Dashboard computations run inside the request, as without REDIS_URL (the worker
    path has its own tests, which override this fixture)."""
    from nuggets_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved
