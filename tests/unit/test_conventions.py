"""Conventions a reviewer would otherwise check by eye: one name per concept, errors in
the domain's words, a Makefile whose targets exist, functions of a readable length."""

import ast
import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# Folders that are not the project's source: tools' caches, the environment, outputs.
SKIPPED = {"node_modules", "var", "site", "__pycache__"}


def _tracked(*patterns: str) -> list[Path]:
    """The repository's files matching ``patterns`` (``*`` crosses folders, as in a
    git pathspec), read from the tree so that a copy without ``.git`` checks alike."""
    found = []
    for path in sorted(REPO.rglob("*")):
        parts = path.relative_to(REPO).parts
        if any(p.startswith(".") or p in SKIPPED for p in parts[:-1]):
            continue
        name = "/".join(parts)
        if path.is_file() and any(fnmatch.fnmatchcase(name, p) for p in patterns):
            found.append(path)
    return found


def test_the_relevance_level_has_one_name():
    # Spelled in pieces so this test does not match itself.
    old = "relevant" + "_threshold"
    offenders = [
        str(path.relative_to(REPO))
        for path in _tracked("*.py", "*.html", "*.md", "*.js")
        if path.exists() and old in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_the_matcher_knows_no_domain_error():
    # The matcher stands alone: its own error, translated where the product calls it.
    from matcher import MatcherError
    from nuggets_app.errors import DomainError

    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "matcher").rglob("*.py")
        if "DomainError" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
    assert not issubclass(MatcherError, DomainError)


def _service_modules() -> list[Path]:
    """Every module of the services, ``nuggets_app/ir`` and ``nuggets_app/learning``."""
    return [
        path
        for path in _tracked("nuggets_app/*.py")
        if path.parts[len(REPO.parts) + 1] in ("ir", "learning")
        or any(part.startswith("services") for part in path.relative_to(REPO).parts)
    ]


def test_services_speak_the_domain_not_the_command_line():
    # A flag starts a word: NIST's "NA--no relevant docs" is no flag.
    flag = re.compile(r"(?<![\w-])--[a-z]")
    offenders = [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.value[:60]!r}"
        for path in _service_modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and flag.search(node.value)
    ]
    assert offenders == []


def test_every_phony_make_target_is_a_rule_with_its_help():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    phony = {
        name
        for line in makefile.splitlines()
        if line.startswith(".PHONY:")
        for name in line.removeprefix(".PHONY:").split()
    }
    helped = set(re.findall(r"^([A-Za-z0-9_-]+):[^=\n]*## ", makefile, re.MULTILINE))
    assert {"test", "test-unit", "test-integration"} <= phony
    assert phony - helped == set()  # declared, but no rule with a "##" help
    assert helped - phony == set()  # a target named like a file that is none


def _shared_tasks(path: Path) -> set[str]:
    """The functions of ``path`` decorated with ``@shared_task`` (called or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = (
                    decorator.func if isinstance(decorator, ast.Call) else decorator
                )
                if isinstance(target, ast.Name) and target.id == "shared_task":
                    found.add(node.name)
    return found


def test_the_top_floor_lists_every_task():
    tasks = {
        name
        for path in _tracked("nuggets_app/*tasks.py")
        if path.name == "tasks.py"
        for name in _shared_tasks(path)
    }
    top = ast.parse((REPO / "nuggets_app" / "tasks.py").read_text(encoding="utf-8"))
    listed = next(
        ast.literal_eval(node.value)
        for node in top.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    )
    assert len(tasks) >= 11
    assert tasks - set(listed) == set()


def test_no_product_function_is_over_a_hundred_lines():
    # Measured from the first decorator to the last line, docstring included.
    limit = 100
    offenders = []
    for path in _tracked("nuggets_app/*.py", "assessor_ui/*.py", "matcher/*.py"):
        if "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > limit:
                    offenders.append(f"{path.relative_to(REPO)}:{first} {node.name}")
    assert offenders == []
