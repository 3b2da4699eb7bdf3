"""A service's domain error as a command's error: the service names the input at
fault in its own words (``DomainError.field``), the command names its flag."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.management.base import CommandError

from nuggets_app.errors import DomainError


def command_error(
    error: DomainError, flags: Mapping[str, str] | None = None
) -> CommandError:
    """``error`` as a CommandError: the service's sentence, then the command's flag of
    the input at fault (``error.field``) in parentheses. ``flags`` maps a field to its
    flag where the two differ; by default ``size`` is ``--size`` and ``per_run_quota``
    is ``--per-run-quota``."""
    if error.field is None:
        return CommandError(str(error))
    flag = (flags or {}).get(error.field) or "--" + error.field.replace("_", "-")
    text = str(error)
    stop = "." if text.endswith(".") else ""
    return CommandError(f"{text.removesuffix('.')} ({flag}){stop}")
