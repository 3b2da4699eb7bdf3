"""What tests of every layer share: waiting until something has happened, a free local
port, and the qrels and runs of the test collections read straight from their files
(the reference the product's results are checked against). One place, so that every
wait fails the same way (an AssertionError that says what did not happen) and none
sleeps a fixed time."""

from __future__ import annotations

import gzip
import socket
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def poll_until(
    check: Callable[[], T],
    what: str,
    timeout: float = 30.0,
    *,
    interval: float = 0.1,
    not_yet: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``check()`` until it returns something truthy and return that; an
    exception of ``not_yet`` counts as "not yet" (a page still loading). Raises
    AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except not_yet:
            value = None  # type: ignore[assignment]
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def status_until(row: Any, statuses: Iterable[str], timeout: float = 60.0) -> Any:
    """Reload ``row`` (a job, a task record) until its status is one of ``statuses``."""
    wanted = set(statuses)

    def reached() -> bool:
        row.refresh_from_db()
        return row.status in wanted

    what = f"{type(row).__name__} {row.pk} to be {sorted(wanted)}"
    poll_until(reached, what, timeout, interval=0.2)
    return row


def free_port() -> int:
    """A TCP port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_qrels(
    path: Path, qids: Iterable[str] | None = None
) -> dict[str, dict[str, int]]:
    """``qid -> docno -> grade`` of a TREC qrels file (``qid iter docno grade``), only
    the topics of ``qids`` when given."""
    wanted = None if qids is None else set(qids)
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, docno, grade = line.split()
        if wanted is None or qid in wanted:
            out.setdefault(qid, {})[docno] = int(grade)
    return out


def read_run(path: Path) -> Iterator[tuple[str, str, int, float, str]]:
    """``(qid, docno, rank, score, tag)`` of each line of a TREC run file (gzip or not)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as lines:
        for line in lines:
            qid, _, docno, rank, score, tag = line.split()
            yield qid, docno, int(rank), float(score), tag
