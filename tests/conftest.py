"""Shared fixtures: the three personas every view test uses, and data paths."""

import os
from pathlib import Path

import pytest

# The matcher's persistent stem table stays out of the user's cache during tests (the
# tests of matcher.stems point it at their own files); worker processes inherit this.
os.environ.setdefault("MATCHER_STEM_TABLE", "off")

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = REPO / "tests" / "data"
# Real public collections, cut to what the tests read (tests/data/public/README.md).
SHARED_DATA = TEST_DATA / "public"


@pytest.fixture
def shared_data() -> Path:
    """The real public test collections kept in the repository (see each README)."""
    return SHARED_DATA


@pytest.fixture
def assessor(db):
    from tests.factories import UserFactory

    return UserFactory(username="alice")


@pytest.fixture
def other_assessor(db):
    from tests.factories import UserFactory

    return UserFactory(username="bob")


@pytest.fixture
def staff(db):
    from tests.factories import UserFactory

    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def assessor_client(client, assessor):
    client.force_login(assessor)
    return client


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def _hypothesis_profiles() -> None:
    import os

    from hypothesis import settings

    # By default the same examples every run and no example database, so that
    # `make test` passes or fails alike on every machine; HYPOTHESIS_PROFILE=explore
    # searches new random examples (no deadline either way: speed lives in benchmarks).
    settings.register_profile(
        "deterministic", derandomize=True, database=None, deadline=None
    )
    settings.register_profile("explore", deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


_hypothesis_profiles()
