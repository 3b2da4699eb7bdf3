"""The app served by a real gunicorn, for the tests of a deployment's faults."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import free_port, poll_until

REPO = Path(__file__).resolve().parents[3]


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), 0.5):
            return True
    except OSError:
        return False


def wait(check, what: str, seconds: float = 60) -> None:
    poll_until(check, what, seconds, interval=0.2)


@contextmanager
def gunicorn(env: dict[str, str], tmp_path: Path, threads: int) -> Iterator[str]:
    """gunicorn serving the app under ``env`` (one worker, ``threads`` threads) on a
    free port, its output in ``tmp_path/gunicorn.log``. Yields its URL once it
    listens; stops it after, and fails the test if it logged an Internal Server Error
    (a 500 the client may not have seen)."""
    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "nuggets_app.wsgi",
             "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", str(threads)],
            cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            wait(lambda: listening(port), "gunicorn")
            yield f"http://127.0.0.1:{port}"
        finally:
            server.terminate()
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
    server_log = log_path.read_text(errors="replace")
    assert "Internal Server Error" not in server_log, server_log[-4000:]
