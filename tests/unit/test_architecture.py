"""Boundaries the layout promises: import contracts, no run-time downloads."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_hold():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_nothing_downloads_data_or_browsers_at_run_time():
    # Spelled in pieces so this test does not match itself.
    pattern = re.compile("nltk" + r"\.download|playwright" + r"\s+install")
    offenders = [
        str(path.relative_to(REPO))
        for folder in ("matcher", "nuggets_app", "assessor_ui")
        for path in (REPO / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
