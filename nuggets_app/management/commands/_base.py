"""What several commands share (a ``_`` module is not a command itself): looking
objects up, rule and relevance options, and the import commands' common arguments,
progress bar and error contract (bad input ends the command with a non-zero status and
``FILE:LINE: problem`` lines, never a traceback)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser
from django.db.models import Model, QuerySet
from tqdm import tqdm

from nuggets_app.collection.services.relevance import (
    RelevanceLevelError,
    relevance_level_set,
)
from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.inputs import InputError
from nuggets_app.importers.errors import escape_path
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.rule_grammar import RULE_OPTIONS, rule_from_options
from nuggets_app.management.flags import command_error
from nuggets_app.models import Collection, MatchJob

M = TypeVar("M", bound=Model)
# The import commands' flags of the fields their services' errors name.
IMPORT_FLAGS = {"changed_text": "--changed-text reanchor"}
T = TypeVar("T")


def only_one(objects: QuerySet[M], *, unknown: str, several: str) -> M:
    """The one object of ``objects``, else a CommandError.

    The message is ``unknown`` when there is none and ``several`` when there are more
    (a name shared across collections or pools).
    """
    found = list(objects[:2])
    if not found:
        raise CommandError(unknown)
    if len(found) > 1:
        raise CommandError(several)
    return found[0]


@contextmanager
def input_errors() -> Iterator[None]:
    """Bad input of the evaluation commands (a file line, a missing object) as a
    CommandError with the same message."""
    try:
        yield
    except InputError as error:
        raise CommandError(str(error)) from None


def add_run_names_argument(parser: CommandParser) -> None:
    """``--run NAME ...`` (``run_names``): stored runs read in database mode."""
    parser.add_argument(
        "--run",
        dest="run_names",
        nargs="+",
        metavar="NAME",
        help="database mode: stored runs (default: all runs of the collection)",
    )


def add_rule_arguments(
    parser: CommandParser, **help_extra: str
) -> argparse._MutuallyExclusiveGroup:
    """The decision rule's options (``RULE_OPTIONS`` of the rules service), mutually
    exclusive; ``help_extra`` appends to an option's help by its destination name.
    Returns the group, for a command that adds a way of its own to give a rule."""
    group = parser.add_mutually_exclusive_group()
    for name, keywords in RULE_OPTIONS:
        options: dict[str, Any] = dict(keywords)
        extra = help_extra.get(name.replace("-", "_"))
        if extra:
            options["help"] = f"{options['help']} {extra}"
        group.add_argument(f"--{name}", **options)
    return group


def rule_of_options(
    options: dict[str, Any],
    job: MatchJob | None = None,
    per_topic: dict[str, float] | None = None,
) -> DecisionRule:
    """The rule given by :func:`add_rule_arguments`' options through the one rule
    path (:func:`rule_from_options`), a refused spelling or value as a CommandError
    of the same sentence; without one, ``job``'s default rule."""
    try:
        return rule_from_options(
            rule=options.get("rule"),
            fit=options.get("fit"),
            top_n=options.get("top_n"),
            threshold=options.get("threshold"),
            per_topic=per_topic,
            job=job,
        )
    except DomainError as error:
        raise command_error(error) from None


def _relevance_level(text: str) -> int:
    """A grade of 1 or more, checked before anything is read or written."""
    try:
        level = int(text)
    except ValueError:
        level = 0
    if level < 1:
        raise argparse.ArgumentTypeError(
            f"a grade of 1 or more (relevant at grade >= it), got {text!r}"
        )
    return level


def add_relevance_level_argument(parser: CommandParser, *, what: str) -> None:
    """``--relevance-level K``: relevant at grade >= K, set on the collection."""
    parser.add_argument(
        "--relevance-level",
        type=_relevance_level,
        metavar="K",
        help=f"{what}: relevant at grade >= K for binary decisions (TREC DL: 2; "
        "default: the smallest positive grade); recorded on every job launched later",
    )


def relevance_level_apply(name: str, level: int | None) -> str | None:
    """Set collection ``name``'s level when one was given; the line to print."""
    if level is None:
        return None
    collection = Collection.objects.get(name=name)
    try:
        relevance_level_set(collection=collection, level=level)
    except RelevanceLevelError as error:
        raise CommandError(f"--relevance-level: {error}") from None
    return f"{collection.name}: relevant at grade >= {collection.relevance_level}"


# --- the import commands ------------------------------------------------------------
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
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        except DomainError as error:
            raise command_error(error, IMPORT_FLAGS) from None
        except OSError as error:
            raise CommandError(str(error)) from None
