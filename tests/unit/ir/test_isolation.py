"""The Django-free maths (nuggets_app.ir, nuggets_app.learning) stays free of Django:
importing every module of a package in a fresh interpreter loads none."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """
import importlib, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for module in pkgutil.iter_modules(package.__path__):
    importlib.import_module(sys.argv[1] + "." + module.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("django", "celery"))
print(",".join(loaded))
"""


@pytest.mark.parametrize("package", ["nuggets_app.ir", "nuggets_app.learning"])
def test_importing_every_module_of_the_maths_loads_no_django_or_celery(package):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, package],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip() == ""
