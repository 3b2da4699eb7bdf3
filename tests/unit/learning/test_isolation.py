"""nuggets_app.learning stays free of Django: importing it in a fresh interpreter loads none."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """
import importlib, pkgutil, sys
import nuggets_app.learning as learning
for module in pkgutil.iter_modules(learning.__path__):
    importlib.import_module("nuggets_app.learning." + module.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "celery"))
print(",".join(loaded))
"""


def test_importing_every_learning_module_loads_no_django_or_celery():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip() == ""
