"""The lab is a client of the product: it never assigns to a product module's
attributes nor patches its files (docs style, "A method is a value"). A variant under
study is a value the product takes (an ``Estimator``), defined in the lab.

Every ``.py`` file under ``lab/`` is parsed; an assignment, augmented assignment,
deletion or ``setattr`` whose target is an attribute of an imported ``nuggets_app``,
``matcher`` or ``lab`` module (however imported, at any scope) fails, as does any
``.patch`` file under ``lab/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LAB = ROOT / "lab"
GUARDED = ("nuggets_app", "matcher", "lab")


def _is_module(dotted: str) -> bool:
    """Is ``dotted`` a module or package of the repository (not a function or class
    of one)? Read from the files, without importing anything."""
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def module_names(tree: ast.AST) -> set[str]:
    """The names bound to guarded modules anywhere in ``tree``: ``import a.b`` binds
    ``a``; ``import a.b as m`` and ``from a import b as m`` (``a.b`` a module)
    bind ``m``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in GUARDED:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in GUARDED:
                continue
            for alias in node.names:
                if _is_module(f"{node.module}.{alias.name}"):
                    names.add(alias.asname or alias.name)
    return names


def _root(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign | ast.Delete):
        found = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        found = [node.target]
    else:
        return []
    flat: list[ast.expr] = []
    while found:
        target = found.pop()
        if isinstance(target, ast.Tuple | ast.List):
            found.extend(target.elts)
        elif isinstance(target, ast.Starred):
            found.append(target.value)
        else:
            flat.append(target)
    return flat


def violations(source: str, filename: str = "<lab>") -> list[str]:
    """``file:line: what`` for every assignment to, or ``setattr`` on, an attribute
    of a guarded module in ``source``."""
    tree = ast.parse(source, filename)
    modules = module_names(tree)
    out = []
    for node in ast.walk(tree):
        for target in _targets(node):
            if isinstance(target, ast.Attribute) and _root(target) in modules:
                out.append(f"{filename}:{node.lineno}: assigns {ast.unparse(target)}")
        is_setattr = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
        )
        if is_setattr and node.args and _root(node.args[0]) in modules:
            out.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_no_lab_file_assigns_to_a_product_module():
    found = [
        problem
        for path in sorted(LAB.rglob("*.py"))
        for problem in violations(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert found == []


def test_no_patch_file_lives_in_the_lab():
    assert sorted(str(p.relative_to(ROOT)) for p in LAB.rglob("*.patch")) == []


BAD = """
import nuggets_app.ir.model_assisted
import nuggets_app.ir.intervals as iv
from nuggets_app.ir import model_assisted as ma
from nuggets_app.ir.model_assisted import topic_sample
from lab.services import simulation


def study():
    from matcher import evidence

    tuning = ma.power_tuning
    ma.power_tuning = lambda *a, **k: 2 * tuning(*a, **k) - 1
    iv.THIN_BELOW += 1
    nuggets_app.ir.model_assisted.CUTOFF = 10
    setattr(ma, "REPORTED", None)
    simulation._baseline, other = (lambda *a: {}), 1
    del evidence.match
    topic_sample.cache = {}  # a function's attribute: not a module's
    local = object()
    local.value = 1
"""


@pytest.mark.parametrize(
    "what",
    [
        "assigns ma.power_tuning",
        "assigns iv.THIN_BELOW",
        "assigns nuggets_app.ir.model_assisted.CUTOFF",
        "setattr(ma, 'REPORTED', None)",
        "assigns simulation._baseline",
        "assigns evidence.match",
    ],
)
def test_the_check_finds_every_way_of_assigning_to_a_module(what):
    assert any(v.endswith(what) for v in violations(BAD))


def test_the_check_leaves_other_objects_alone():
    assert len(violations(BAD)) == 6
