"""Every command's ``--help`` reads as written: argparse formats argument help with
``%`` (so it needs ``%%``) but prints the description as is."""

import pytest
from django.core.management import get_commands, load_command_class


@pytest.mark.parametrize(
    ("app", "name"),
    sorted(
        (app, n)
        for n, app in get_commands().items()
        if app in ("nuggets_app", "nuggets_app.benchmarks", "lab")
    ),
)
def test_help_prints_no_doubled_percent_sign(app, name):
    command = load_command_class(app, name)
    text = command.create_parser("manage.py", name).format_help()
    assert "%%" not in text


def test_evaluate_help_says_95_percent():
    command = load_command_class("nuggets_app", "evaluate")
    text = " ".join(
        command.create_parser("manage.py", "evaluate").format_help().split()
    )
    assert "95% confidence intervals" in text
