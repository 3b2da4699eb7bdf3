"""What the import commands share: a progress bar and the error contract on exit.

Bad input ends the command with a non-zero status and ``FILE:LINE: problem`` lines
(``CommandError``), never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from nuggets_app.errors import DomainError

from .errors import ImportFormatError, escape_path

T = TypeVar("T")


def add_common_arguments(parser: CommandParser) -> None:
    """``--encoding`` and ``--max-errors``, the same in every import command."""
    parser.add_argument(
        "--encoding", default="utf-8", help="text encoding of the file (default utf-8)"
    )
    parser.add_argument(
        "--max-errors",
        type=int,
        default=1,
        metavar="N",
        help="report up to N bad records before stopping (default 1); nothing is saved",
    )


def check_paths(*paths: str) -> None:
    """CommandError for a path that does not exist."""
    for path in paths:
        if not os.path.exists(path):
            raise CommandError(f"{escape_path(path)}: no such file or directory")


@contextmanager
def progress_bar(unit: str, label: str) -> Iterator[Callable[[int], None]]:
    """A tqdm bar on stderr (hidden when stderr is not a terminal); yields ``update``."""
    bar = tqdm(desc=label, unit=unit, file=sys.stderr, disable=not sys.stderr.isatty())
    try:
        yield bar.update
    finally:
        bar.close()


def run_import(
    unit: str, label: str, action: Callable[[Callable[[int], None]], T]
) -> T:
    """Run ``action(update)``, turning bad input into a one-line (per error) CommandError.

    ``update`` feeds a :func:`progress_bar` of ``unit`` labelled ``label``.
    """
    with progress_bar(unit, label) as update:
        try:
            return action(update)
        except ImportFormatError as error:
            raise CommandError(str(error)) from None
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        except (DomainError, OSError) as error:
            raise CommandError(str(error)) from None
