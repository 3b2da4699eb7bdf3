"""Integration fixtures: a real Celery worker process on the real broker.

The worker is a subprocess (``celery worker --pool=prefork``) pointed at pytest-django's
test database, so tests that use it must commit their rows (``transactional_db``).
It runs the production tasks through ``tests.integration.inference.fault_worker``, which
adds faults only for documents whose text asks for them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings

REPO = Path(__file__).resolve().parents[2]
CELERY = Path(sys.executable).with_name("celery")
WORKER_APP = "tests.integration.inference.fault_worker"


def _database_url() -> str:
    db = settings.DATABASES["default"]
    if "postgresql" not in db["ENGINE"]:
        pytest.skip("the Celery worker tests need DATABASE_URL (PostgreSQL)")
    user = db.get("USER") or "postgres"
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{db['NAME']}"


class Worker:
    """One ``celery worker`` subprocess; restartable, killable, always stopped."""

    def __init__(self, env: dict[str, str], log_dir: Path, concurrency: int = 1):
        self.env = env
        self.log_dir = log_dir
        self.concurrency = concurrency
        self.proc: subprocess.Popen | None = None
        self.log_path: Path | None = None

    def start(self, timeout: float = 60) -> None:
        """Start the worker and wait until it consumes."""
        name = f"test-{uuid.uuid4().hex[:8]}@%h"
        self.log_path = self.log_dir / f"worker-{uuid.uuid4().hex[:8]}.log"
        cmd = [
            str(CELERY), "-A", WORKER_APP, "worker", "--pool=prefork",
            f"--concurrency={self.concurrency}", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE,
            "-n", name, "--loglevel=INFO", "--without-gossip", "--without-mingle",
        ]  # fmt: skip
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log()}")
            if b" ready." in self.log_path.read_bytes():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout}s: {self.log()}")

    def log(self) -> str:
        return (
            self.log_path.read_text(errors="replace")[-4000:] if self.log_path else ""
        )

    def log_text(self) -> str:
        """The whole log of the current process."""
        return self.log_path.read_text(errors="replace") if self.log_path else ""

    def children(self) -> list[int]:
        """Pids of the pool processes."""
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        try:
            return [int(p) for p in path.read_text().split()]
        except FileNotFoundError:
            return []

    def kill_child(self) -> int:
        """SIGKILL one pool process (the main process then starts another)."""
        pid = self.children()[0]
        os.kill(pid, signal.SIGKILL)
        return pid

    def kill_all(self) -> None:
        """SIGKILL the main process and its pool: nothing can ack or requeue."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Warm shutdown, then SIGKILL if it lingers."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker, tmp_path_factory):
    """A real worker process consuming the test queue for the whole session."""
    if not settings.REDIS_URL:
        pytest.skip("the Celery worker tests need REDIS_URL")
    from nuggets_app.celery import app

    env = dict(os.environ)
    env.update(
        DATABASE_URL=_database_url(), PYTHONPATH=str(REPO), MATCH_MAX_ATTEMPTS="3"
    )
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge(settings.CELERY_TASK_DEFAULT_QUEUE)
    worker = Worker(env, tmp_path_factory.mktemp("celery"))
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def broker_down(monkeypatch):
    """The Celery app points at a port where no broker listens."""
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL: without it tasks run in-process")
    from nuggets_app.celery import app

    monkeypatch.setitem(app.conf, "broker_url", "redis://127.0.0.1:9/0")
    monkeypatch.setitem(app.conf, "broker_write_url", "redis://127.0.0.1:9/0")
