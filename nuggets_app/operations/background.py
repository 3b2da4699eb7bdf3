"""A small in-process queue: heavy tasks run after the response when there is no broker.

Without ``REDIS_URL`` Celery runs a task inside the caller (``task_always_eager``), so a
task enqueued on a request's commit would make the person wait for it: model work
(embeddings) above all. :func:`background_submit` hands such a task to one daemon
thread per process instead. The model itself runs in a child process at the lowest CPU
priority (:mod:`nuggets_app.operations.encoder_process`); the thread is not niced: it
holds the interpreter lock while it runs Python, and a niced thread holding it when
the system preempts it stalls the request threads that wait for the lock.

A task here takes one list of ids. Those submitted under one name while it waits are
merged into one run, which waits :data:`GATHER_SECONDS` first for more: one forward
pass of the model for the nuggets saved in that moment, and a nugget saved then edited
at once is embedded once, with its last text. The thread keeps its database connection
while work follows and closes it when the queue is empty. The queue lives in the
process: work waiting when it stops is lost, and done again when first needed (the
tasks are idempotent and their callers say so).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connections

log = logging.getLogger(__name__)

# How long a task waits for others of its name to join it: with 50 assessors saving
# every few seconds, a run per nugget (its queries, a forward pass, a connection
# opened and closed) was a dozen runs a second beside the requests.
GATHER_SECONDS = 0.5

_lock = threading.Lock()
_work: queue.Queue[str] = queue.Queue()
_ids: dict[str, set[int]] = {}
_runs: dict[str, Callable[[list[int]], Any]] = {}
_thread: threading.Thread | None = None
_pid: int | None = None


def background_submit(
    name: str, run: Callable[[list[int]], Any], ids: Iterable[int]
) -> None:
    """Run ``run(ids)`` on this process's background thread, merged with the ids of
    other calls under ``name`` still waiting (each id once, in order)."""
    with _lock:
        _ensure_thread()
        waiting = _ids.setdefault(name, set())
        queued = bool(waiting)
        waiting.update(ids)
        _runs[name] = run
    if not queued:
        _work.put(name)


def background_wait(timeout: float | None = None) -> bool:
    """Block until every submitted task has run (True), or ``timeout`` passed."""
    done = threading.Event()

    def _join() -> None:
        _work.join()
        done.set()

    threading.Thread(target=_join, daemon=True).start()
    return done.wait(timeout)


def _ensure_thread() -> None:
    global _thread, _pid
    # A forked process (a gunicorn or Celery child) inherits no running thread.
    if _thread is not None and _thread.is_alive() and _pid == os.getpid():
        return
    _pid = os.getpid()
    _thread = threading.Thread(target=_serve, name="background-tasks", daemon=True)
    _thread.start()


def _serve() -> None:
    while True:
        name = _work.get()
        time.sleep(GATHER_SECONDS)
        with _lock:
            ids, run = sorted(_ids.pop(name, ())), _runs[name]
        try:
            run(ids)
        except Exception:
            log.exception("background task %s(%r) failed", name, ids)
        finally:
            if _work.empty():
                connections.close_all()
            _work.task_done()
