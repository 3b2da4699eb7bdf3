"""manage.py demo on a fresh embedded SQLite, as `make run` uses it, and the generator.

The demo runs in subprocesses with no DATABASE_URL or REDIS_URL, exactly like the
README's run command, in a temporary DATA_DIR.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nuggets_app.demo.generate import DATA_DIR, write_dataset
from tests.conftest import REPO


def manage(data_dir: Path, *args: str, debug: str = "1") -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(DATA_DIR=str(data_dir), DEBUG=debug)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def dump(data_dir: Path) -> list[dict]:
    result = manage(data_dir, "dumpdata", "nuggets_app", "auth.user", "auth.group")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("demo")
    migrate = manage(data_dir, "migrate", "--noinput", "-v0")
    assert migrate.returncode == 0, migrate.stderr
    return data_dir


def test_the_demo_loads_and_prints_the_url_and_logins(demo_dir):
    result = manage(demo_dir, "demo", "--url", "http://127.0.0.1:8123/")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "demo: 300 documents, 6 topics, 6 runs; pool demo-depth20" in out
    assert "open http://127.0.0.1:8123/" in out
    assert "DEMO ONLY" in out
    for login in (
        "admin  demo-admin-pass",
        "alice  demo-alice-pass",
        "bob    demo-bob-pass",
    ):
        assert login in out
    rows = dump(demo_dir)
    by_model: dict[str, list[dict]] = {}
    for row in rows:
        by_model.setdefault(row["model"], []).append(row["fields"])
    html = [d for d in by_model["nuggets_app.document"] if d["html"]]
    assert 20 <= len(html) <= 60
    assert not any("<script" in d["html"] for d in html)
    assert len(by_model["nuggets_app.sampledocument"]) == 6 * 15
    pairs = {(a["topic"], a["assessor"]) for a in by_model["nuggets_app.assignment"]}
    assert len(pairs) == 8  # six topics, two of them judged by both assessors
    users = {u["username"]: u for u in by_model["auth.user"]}
    assert users["admin"]["is_superuser"]
    assert not users["alice"]["is_staff"]


def test_running_the_demo_twice_changes_nothing(demo_dir):
    first = manage(demo_dir, "demo")
    assert first.returncode == 0, first.stderr
    before = dump(demo_dir)
    again = manage(demo_dir, "demo")
    assert again.returncode == 0, again.stderr
    assert dump(demo_dir) == before
    assert "alice  demo-alice-pass" in again.stdout


def test_the_demo_refuses_published_passwords_without_debug(tmp_path):
    result = manage(tmp_path, "demo", debug="0")
    assert result.returncode != 0
    assert "published passwords" in result.stderr


def test_the_shipped_dataset_is_what_the_generator_makes(tmp_path):
    counts = write_dataset(tmp_path)
    assert counts["documents"] == 300
    assert counts["topics"] == 6
    shipped = sorted(
        p.relative_to(DATA_DIR) for p in DATA_DIR.rglob("*") if p.is_file()
    )
    assert shipped == sorted(
        p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()
    )
    for relative in shipped:
        assert (tmp_path / relative).read_bytes() == (DATA_DIR / relative).read_bytes()
    assert sum((DATA_DIR / p).stat().st_size for p in shipped) < 1_000_000
