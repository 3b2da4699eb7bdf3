"""Progress of the per-topic workflow commands (``build_pool``, ``sample``).

The services report ``progress(done, total)`` per topic; the commands show it as a
tqdm bar and turn the service's domain error into a ``CommandError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import CommandError
from tqdm import tqdm

from nuggets_app.errors import DomainError
from nuggets_app.management.flags import command_error


class TopicProgress:
    """A tqdm bar fed by the services' ``progress(done, total)`` callback; drawn from
    the first report on, so a command that fails its checks first prints its error
    alone, not after an empty bar."""

    def __init__(self, label: str, enabled: bool = True) -> None:
        self.label, self.enabled = label, enabled
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = tqdm(
                desc=self.label, unit="topic", disable=not self.enabled, leave=False
            )
        self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def topic_progress(
    label: str, *, verbosity: int, errors: type[Exception]
) -> Iterator[TopicProgress]:
    """A :class:`TopicProgress` (shown at verbosity > 0), closed on leaving the block.

    ``errors`` raised in the block (the service's domain error) become a CommandError
    with the same message.
    """
    progress = TopicProgress(label, enabled=verbosity > 0)
    try:
        yield progress
    except errors as error:
        if isinstance(error, DomainError):
            raise command_error(error) from error
        raise CommandError(str(error)) from error
    finally:
        progress.close()
