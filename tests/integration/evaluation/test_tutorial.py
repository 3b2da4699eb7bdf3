"""The tutorial (``docs/tutorial/index.md``) from a fresh copy of the repository: every
command of its ``sh`` blocks, exactly as written and in its order, in a shell in the
copy's root, with the environment of a new terminal (no ``DATABASE_URL``,
``REDIS_URL``, ``DEBUG`` or ``LAB``).

``make run`` is run too, until it serves its login page. The copy's ``.venv`` is this
interpreter's packages (a virtual environment of links, marked installed, so ``make``
installs nothing). What the tutorial asks the reader to do in the browser (alice
judges her topics and marks a nugget in each relevant document) is done through the
same services the judging page calls.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import sysconfig
import time
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow  # about three minutes
TUTORIAL = REPO / "docs" / "tutorial" / "index.md"
# Left out of the copy: what a fresh clone does not have.
NOT_CLONED = (".git", ".venv", "var", "test-artifacts", "site", "node_modules",
              "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache",
              ".hypothesis", "bench-out", "*.pyc")  # fmt: skip
# Alice judges her sampled documents with the demo's ground truth and marks the first
# sentence of each relevant one as a nugget, through the judging services.
JUDGE = """
import re, uuid
from django.contrib.auth import get_user_model
from nuggets_app.judging.services.judgments import judgment_record
from nuggets_app.judging.services.nuggets import nugget_save
from nuggets_app.models import Assignment, SampleDocument
truth = {}
for line in open("nuggets_app/demo/data/qrels.txt"):
    qid, _, docno, rel = line.split()
    truth[(qid, docno)] = int(rel)
alice = get_user_model().objects.get(username="alice")
for a in Assignment.objects.filter(assessor=alice).select_related("topic", "sample"):
    rows = SampleDocument.objects.filter(sample=a.sample, topic=a.topic)
    for sd in rows.select_related("document"):
        doc = sd.document
        rel = truth.get((a.topic.qid, doc.docno), 0)
        judgment_record(assessor=alice, topic=a.topic, document=doc, relevance=rel)
        found = re.search(r"[^.]{20,}?[.]", doc.text) if rel else None
        if found:
            nugget_save(assessor=alice, topic=a.topic, document=doc,
                        start=found.start(), end=found.end(), text=found.group(),
                        keywords=[], grade=None, aspect="", client_uuid=uuid.uuid4())
"""


def tutorial_commands() -> list[tuple[str, str]]:
    """``(section, command)`` for every command of the tutorial's ``sh`` blocks, a
    backslash-continued command joined into one line."""
    section, out, block = "", [], None
    for line in TUTORIAL.read_text(encoding="utf-8").splitlines():
        if block is None:
            if line.startswith("## "):
                section = line[3:]
            elif line.strip() == "```sh":
                block = []
        elif line.strip() == "```":
            text = "\n".join(block).replace("\\\n", " ")
            out += [(section, c.strip()) for c in text.splitlines() if c.strip()]
            block = None
        else:
            block.append(line)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _clone(root: Path) -> Path:
    """A copy of the repository as a fresh clone has it, with a ``.venv`` of links."""
    clone = root / "clone"
    shutil.copytree(REPO, clone, ignore=shutil.ignore_patterns(*NOT_CLONED))
    venv = clone / ".venv"
    lib = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (venv / "bin").mkdir(parents=True)
    lib.mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", venv / "pyvenv.cfg")
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    (lib / "site-packages").symlink_to(sysconfig.get_paths()["purelib"])
    (venv / ".installed").touch()  # newer than requirements.txt: make installs nothing
    return clone


def _terminal() -> dict[str, str]:
    skip = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DATA_DIR", "DEBUG",
            "LAB", "SECRET_KEY", "LOG_LEVEL")  # fmt: skip
    return {k: v for k, v in os.environ.items() if k not in skip}


def _make_run(clone: Path, env: dict[str, str]) -> str:
    """``make run`` until its login page answers; its output."""
    port = _free_port()
    log = clone.parent / "make-run.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            ["make", "run", f"PORT={port}"], cwd=clone, env=env, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 240
            while True:
                assert server.poll() is None, log.read_text()
                try:
                    url = f"http://127.0.0.1:{port}/login/"
                    with urllib.request.urlopen(url, timeout=5) as response:
                        assert response.status == 200
                        break
                except OSError:
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(1)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    return log.read_text()


def _run(clone: Path, env: dict[str, str], command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, shell=True, cwd=clone, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip


def _users(database: Path) -> set[str]:
    """The usernames of an embedded (SQLite) database."""
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute("SELECT username FROM auth_user").fetchall()
    return {name for (name,) in rows}


def _no_nan(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON output")

    return json.loads(text, parse_constant=refuse)


def test_the_tutorial_runs_from_a_fresh_clone_as_written(tmp_path):
    commands = tutorial_commands()
    assert commands[0] == ("1. Start the demo", "make run")
    clone = _clone(tmp_path)
    before = {p.name for p in clone.iterdir()}
    env = _terminal()
    output = _make_run(clone, env)
    assert "open http://127.0.0.1:" in output
    outputs: dict[str, subprocess.CompletedProcess] = {}
    judged = False
    for section, command in commands[1:]:
        if section.startswith("4.") and not judged:  # after judging in the browser
            result = _run(clone, env, f".venv/bin/python manage.py shell -c '{JUDGE}'")
            assert result.returncode == 0, result.stderr
            judged = True
        result = _run(clone, env, command)
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        # The embedded mode's tasks run in the command: no Celery or kombu lines.
        assert not re.search(r"INFO|kombu|No hostname", result.stderr), result.stderr
        words = command.split()
        outputs[words[words.index("manage.py") + 1]] = result
    assert judged
    assert "job 1: done" in outputs["match"].stdout
    assert (clone / "var" / "q.txt").exists()
    assert (clone / "var" / "q.txt.provenance.json").exists()
    assert "AP\tall\t" in outputs["evaluate"].stdout
    # Truth judges six topics, alice's merged qrels four: compared on those four.
    compared = outputs["compare_qrels"]
    assert "topics\t4\n" in compared.stdout
    assert "left out, judged only in A: 4, 6." in compared.stderr
    summary = _no_nan(outputs["simulate"].stdout)
    assert isinstance(summary, dict)
    for key, value in summary.items():
        if value is None:
            assert summary["null_because"][key]
    assert (clone / "var" / "adi-report" / "report.json").exists()
    # The simulation has a database of its own: the demo's pages show none of it.
    assert _users(clone / "var" / "db.sqlite3") == {"admin", "alice", "bob"}
    assert "simulated-assessor" in _users(clone / "var" / "lab" / "db.sqlite3")
    # Everything the tutorial wrote is under var/: the root holds what it held.
    assert {p.name for p in clone.iterdir()} - before == {".venv", "var"} - before
    assert not list(clone.glob("celerybeat-schedule*"))
