"""Celery processes the benchmarks start and stop themselves: a worker per measured
setting, a beat for the recovery benchmark."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from django.conf import settings


def celery_process(
    args: list[str],
    log: Path,
    loglevel: str = "INFO",
    env: dict[str, str] | None = None,
) -> subprocess.Popen:
    """``celery -A nuggets_app ARGS`` of this environment (``env`` added to it), its
    output appended to ``log``, in a session of its own so that a group kill also
    reaches its children."""
    celery = Path(sys.executable).with_name("celery")
    cmd = [str(celery), "-A", "nuggets_app", *args, f"--loglevel={loglevel}"]
    return subprocess.Popen(
        cmd,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def worker_args(concurrency: int, name: str) -> list[str]:
    """A prefork worker of the default queue, without gossip and mingle (the benchmark's
    workers need not know of each other, and start sooner)."""
    return [
        "worker",
        "--pool=prefork",
        f"--concurrency={concurrency}",
        "-Q",
        settings.CELERY_TASK_DEFAULT_QUEUE,
        "-n",
        f"{name}@%h",
        "--without-gossip",
        "--without-mingle",
    ]


def celery_stop(proc: subprocess.Popen) -> None:
    """A warm shutdown (the running tasks finish), killed with its children after 30 s."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
