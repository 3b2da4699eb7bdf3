"""The same Cranfield import through manage.py on the embedded SQLite database.

Runs in a subprocess with DATABASE_URL removed and DATA_DIR in a temporary folder, as a
new user without PostgreSQL would run it; also checks the exit status and the one-line
error of a bad file.
"""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _manage(env, *args, check=True):
    result = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if check:
        assert result.returncode == 0, result.stderr[-2000:]
    return result


@pytest.mark.slow
def test_cranfield_imports_on_sqlite_through_manage_py(shared_data, tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")
    }
    env.update(DATA_DIR=str(tmp_path), DEBUG="1", LOG_LEVEL="WARNING")
    folder = shared_data / "cranfield"
    runs = sorted(str(p) for p in (folder / "runs").glob("*.run.gz"))
    _manage(env, "migrate", "--noinput", "-v0")
    _manage(
        env, "import_collection", str(folder / "docs.trec.gz"), "--name", "cranfield"
    )
    _manage(
        env, "import_collection", str(folder / "docs.jsonl.gz"), "--name", "cranfield"
    )
    _manage(
        env, "import_topics", str(folder / "topics.trec"), "--collection", "cranfield"
    )
    _manage(
        env,
        "import_qrels",
        str(folder / "qrels.txt"),
        "--collection",
        "cranfield",
        "--name",
        "cran",
    )
    _manage(env, "import_runs", *runs, "--collection", "cranfield")

    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 184 1 2.0 t\n1 Q0 486 2 inf t\n")
    failed = _manage(
        env, "import_runs", str(bad), "--collection", "cranfield", check=False
    )
    assert failed.returncode != 0
    assert (
        failed.stderr.strip()
        .splitlines()[-1]
        .startswith(f"CommandError: {bad}:2: score")
    )

    query = (
        "from nuggets_app.models import *; "
        "print(Document.objects.count(), Topic.objects.count(), QrelsEntry.objects.count(), "
        "Run.objects.count(), RunEntry.objects.count())"
    )
    counts = _manage(env, "shell", "-c", query).stdout.split()
    assert (tmp_path / "db.sqlite3").exists()
    expected_entries = 0
    import gzip

    for run in runs:
        with gzip.open(run, "rb") as handle:
            expected_entries += sum(1 for line in handle if line.strip())
    assert [int(c) for c in counts[-5:]] == [1400, 225, 1837, 36, expected_entries]


@pytest.mark.slow
def test_npl_imports_on_sqlite_with_the_readme_counts(shared_data, tmp_path):
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")
    }
    env.update(DATA_DIR=str(tmp_path), DEBUG="1", LOG_LEVEL="WARNING")
    folder = shared_data / "npl-vaswani"
    _manage(env, "migrate", "--noinput", "-v0")
    _manage(env, "import_collection", str(folder / "docs.jsonl.gz"), "--name", "npl")
    _manage(env, "import_topics", str(folder / "topics.trec"), "--collection", "npl")
    _manage(
        env, "import_qrels", str(folder / "qrels.txt"), "--collection", "npl",
        "--name", "npl",
    )  # fmt: skip
    query = (
        "from nuggets_app.models import *; "
        "print(Document.objects.count(), Topic.objects.count(), "
        "QrelsEntry.objects.count())"
    )
    counts = _manage(env, "shell", "-c", query).stdout.split()
    # npl-vaswani/stats.json: 11429 documents, 93 topics, 2083 qrels lines.
    assert [int(c) for c in counts[-3:]] == [11429, 93, 2083]
