"""Fixtures of the browser tests: one headless Chromium per test module."""

import pytest

from tests.browser.chrome import chromium


@pytest.fixture(scope="module")
def driver():
    with chromium() as browser:
        yield browser
