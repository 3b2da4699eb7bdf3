"""The matcher stays a plain library: importing it never pulls in Django."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_importing_the_whole_matcher_loads_no_django_or_app_module():
    code = (
        "import sys, matcher, matcher.cli, matcher.io, matcher.bench\n"
        "matcher.TopicMatcher([matcher.NuggetSpec('n', 'john kennedy')]).score('kennedy')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('django', 'celery', 'nuggets_app', 'assessor_ui')]\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_package_ships_its_stopword_list():
    assert (REPO / "matcher" / "data" / "stopwords_en.txt").is_file()
