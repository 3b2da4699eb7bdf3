"""The base of every domain error of the project.

A domain error is bad input or a state the user can fix (a malformed file, an unknown
topic, a job in the wrong state); its message is one sentence naming what is at fault.
Views and commands catch :class:`DomainError` and nothing wider, so that a genuine bug
(a ``ValueError`` from numpy, a typo) fails loudly instead of becoming a polite message.

It lives in the matcher, the lowest package, because every package may import it and
the matcher imports nothing of the project; ``nuggets_app.errors`` re-exports it.
"""

from __future__ import annotations


class DomainError(Exception):
    """Bad input or state that the user can fix; the message says what and where."""
