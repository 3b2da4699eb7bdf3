"""Headless Debian Chromium, driven by Selenium: the browser benchmark and the browser
tests start it the same way (flags that keep it off the network, a throwaway profile)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")


def chromium_installed() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()


@contextmanager
def chromium(window: str = "1280,800") -> Iterator[Any]:
    """A headless Chromium WebDriver with a new empty profile, quit and removed after."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        f"--user-data-dir={profile}",
        f"--window-size={window}",
    ):
        options.add_argument(arg)
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.implicitly_wait(0)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
