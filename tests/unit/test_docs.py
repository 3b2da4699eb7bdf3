"""The README stays a front door, and the manual's reference pages name every setting
and every command (the manual's own links are checked by `mkdocs build --strict`)."""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "docs" / "reference"


def _env_names() -> set[str]:
    """Every variable settings.py reads (env_* calls) and .env.example lists."""
    tree = ast.parse((REPO / "nuggets_app" / "settings.py").read_text())
    names = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("env_")
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    example = (REPO / ".env.example").read_text()
    return names | set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", example))


def test_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; the manual is docs/"


def test_every_setting_is_in_the_settings_reference():
    page = (REFERENCE / "settings.md").read_text()
    missing = {name for name in _env_names() if f"`{name}`" not in page}
    assert not missing, f"docs/reference/settings.md lacks {sorted(missing)}"


def test_every_management_command_is_in_the_commands_reference():
    page = (REFERENCE / "commands.md").read_text()
    folder = REPO / "nuggets_app" / "management" / "commands"
    commands = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    missing = {c for c in commands if not re.search(rf"`{c}\b", page)}
    assert not missing, f"docs/reference/commands.md lacks {sorted(missing)}"


FRONT_PAGES = ("README.md", "docs/tutorial/index.md", "docs/howto/loading-data.md")


def _command_lines(path: str) -> list[str]:
    """The lines of the page's code blocks, continuation lines joined."""
    text = (REPO / path).read_text()
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]


def test_front_page_commands_run_as_written_with_the_projects_python():
    # The system Python has no Django: `python manage.py` fails after `make run`.
    for path in FRONT_PAGES:
        for line in _command_lines(path):
            words = line.split()
            # An environment assignment may come first (LAB=1 for the lab's commands).
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words = words[1:]
            if "manage.py" in words or "-m" in words[1:2]:
                assert words[0] == ".venv/bin/python", f"{path}: {line}"


def test_the_tutorial_uses_only_data_the_repository_ships():
    for line in _command_lines("docs/tutorial/index.md"):
        for word in line.split():
            # An environment assignment names a place, not data (DATA_DIR=var/lab).
            word = re.sub(r"^[A-Z_]+=", "", word)
            # var/ is where the tutorial's commands write (git ignores it).
            if "/" not in word or word.startswith((".venv/", "http", "var/")):
                continue
            assert not word.startswith("../"), f"outside the repository: {line}"
            assert list(REPO.glob(word)), f"not in the repository: {word} ({line})"


def test_the_manual_is_read_served_with_a_make_target():
    makefile = (REPO / "Makefile").read_text()
    target = re.search(r"^docs-serve:.*\n\t(.*)$", makefile, re.MULTILINE)
    assert target, "no docs-serve target"
    assert "mkdocs serve" in target.group(1)
    for path in ("README.md", "docs/development.md"):
        assert "make docs-serve" in (REPO / path).read_text(), path


def test_make_run_says_where_it_listens_and_how_to_change_it():
    # `make run PORT=8080` is how a second demo or a busy port is handled.
    makefile = (REPO / "Makefile").read_text()
    help_text = re.search(r"^run:.*## (.*)$", makefile, re.MULTILINE)
    assert help_text, "no run target with a ## description"
    assert "HOST" in help_text.group(1)
    assert "PORT" in help_text.group(1)
    assert "make run PORT=" in (REPO / "README.md").read_text()
