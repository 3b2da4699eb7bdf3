"""A small in-process queue: heavy tasks run after the response when there is no broker.

Without ``REDIS_URL`` Celery runs a task inside the caller (``task_always_eager``), so a
task enqueued on a request's commit would make the person wait for it: model work
(embeddings) above all. :func:`background_submit` hands such a task to one daemon
thread per process instead, which runs the tasks one after the other, at a lower CPU
priority than the threads serving requests, each in its own database connection
(closed after the task). A task already waiting with the same arguments is not queued
twice. The queue lives in the process: work waiting when it stops is lost, and done
again when first needed (the tasks are idempotent and their callers say so).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from django.db import connections

log = logging.getLogger(__name__)

# Nice value of the background thread: requests' threads (0) get the CPU first.
NICENESS = 10

_lock = threading.Lock()
_work: queue.Queue[tuple[str, tuple[Any, ...], Callable[..., Any]]] = queue.Queue()
_waiting: set[tuple[str, str]] = set()
_thread: threading.Thread | None = None
_pid: int | None = None


def background_submit(
    name: str, run: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    """Run ``run(*args)`` on this process's background thread (``name`` and ``args``
    identify it: the same call still waiting is not queued again)."""
    key = (name, repr(args))
    with _lock:
        _ensure_thread()
        if key in _waiting:
            return
        _waiting.add(key)
    _work.put((name, args, run))


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
    # On Linux a thread has its own nice value (the thread id names it).
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    while True:
        name, args, run = _work.get()
        with _lock:
            _waiting.discard((name, repr(args)))
        try:
            run(*args)
        except Exception:
            log.exception("background task %s%r failed", name, args)
        finally:
            connections.close_all()
            _work.task_done()
