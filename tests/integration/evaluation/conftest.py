"""Fixtures of the evaluation tests: the Cranfield world and a researcher persona."""

import pytest
from django.contrib.auth.models import Group

from tests.factories import UserFactory
from tests.integration.evaluation.world import evaluation_world


@pytest.fixture
def world(shared_data, assessor):
    return evaluation_world(shared_data, assessor)


@pytest.fixture
def researcher(db):
    user = UserFactory(username="carol")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user
