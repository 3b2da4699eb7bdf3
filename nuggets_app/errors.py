"""The base of every domain error of the product.

A domain error is bad input or a state the user can fix (a malformed file, an unknown
topic, a job in the wrong state); its message is one sentence naming what is at fault.
Views and commands catch :class:`DomainError` and nothing wider, so that a genuine bug
(a ``ValueError`` from numpy, a typo) fails loudly instead of becoming a polite message.

Services speak the domain, never the command line: a message names "the top-up size",
not a flag, and the error's ``field`` says which input it is, so that a command adds its
flag and a page marks its field.

The matcher stands alone and has its own error, :class:`matcher.MatcherError`, which
is no domain error: where the product hands the matcher something a user gave,
:func:`matcher_input` raises the matcher's sentence again as a domain error.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from matcher import MatcherError

__all__ = ["DomainError", "MatcherInputError", "matcher_input"]


class DomainError(Exception):
    """Bad input or state that the user can fix; the message says what and where, in
    the domain's words. ``field``, when one input is at fault, names it as the
    service's keyword argument: a command names its flag, a form its field."""

    def __init__(self, *args: object, field: str | None = None) -> None:
        super().__init__(*args)
        self.field = field


class MatcherInputError(DomainError):
    """The matcher refused what it was given (a nugget, an option); the message is the
    matcher's."""


@contextmanager
def matcher_input(error: type[DomainError] = MatcherInputError) -> Iterator[None]:
    """Run calls into the matcher, a :class:`MatcherError` raised again as ``error``
    (a domain error of the calling service) with the same sentence."""
    try:
        yield
    except MatcherError as exc:
        raise error(str(exc)) from exc
