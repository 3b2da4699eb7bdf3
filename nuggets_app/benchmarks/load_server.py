"""A server under load, for the benchmarks that put one there: gunicorn on loopback
with a production-like profile, plain HTTP requests to it, and the machine's figures
(its CPU, its busy time, a free port, a percentile)."""

from __future__ import annotations

import http.client
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine spent busy since boot (``/proc/stat``:
    user, nice, system, irq and softirq time), 0 where there is no such file."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = map(int, fields)
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def free_port(port: int) -> int:
    """``port`` if nothing listens there (a free one for 0); never measure a stranger."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            raise CommandError(f"port {port} is in use") from None
        return probe.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    found = re.search(r"model name\s*:\s*(.+)", text)
    return found.group(1).strip() if found else "unknown CPU"


class gunicorn_server:
    """gunicorn (gthread) on loopback with a production-like profile over plain HTTP."""

    def __init__(self, opts: dict) -> None:
        self.opts = opts
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-judging-")
        self.env = {
            **os.environ,
            "DEBUG": "0",
            # Production settings refuse to start without a key: a throwaway one for
            # this server when the caller runs with DEBUG=1 and none set.
            "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
            "SECURE_SSL_REDIRECT": "0",
            "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0",
            "DATA_DIR": self.tmp.name,
            "LOG_LEVEL": "WARNING",
            "SEMANTIC_EVIDENCE": opts.get("semantic_mode", "on"),
        }

    def __enter__(self) -> str:
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        subprocess.run(
            [*manage, "collectstatic", "--noinput", "-v0"], env=self.env, check=True
        )
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "nuggets_app.wsgi",
                "--bind",
                f"127.0.0.1:{self.opts['port']}",
                "--workers",
                str(self.opts["workers"]),
                "--threads",
                str(self.opts["threads"]),
                "--worker-class",
                "gthread",
                "--log-level",
                "warning",
            ],
            env=self.env,
            cwd=settings.BASE_DIR,
        )
        # Three workers import and warm up at once: slower on a busy machine.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if request(self.opts["port"], "GET", "/healthz/live")[0] == 200:
                    return f"http://127.0.0.1:{self.opts['port']}"
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise CommandError("gunicorn did not start within 120 s")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.tmp.cleanup()


def request(port: int, method: str, path: str, body: str = "", headers=None, conn=None):
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body or None, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    if own:
        conn.close()
    return response.status, response, data
