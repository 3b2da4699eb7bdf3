"""Run a command against PostgreSQL and Redis, starting throwaway ones if needed.

``python tests/services.py --database URL --redis URL -- COMMAND...`` checks that both
servers answer. Where one does not, it starts a throwaway server of its own from the
installed binaries (``initdb``/``pg_ctl``, ``redis-server``) in a temporary folder on a
free port, points the command at it through ``DATABASE_URL``/``REDIS_URL``, and stops
and removes it afterwards. Where the binaries are missing it says what to install.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

POSTGRES_PACKAGES = "postgresql (Debian/Ubuntu: apt-get install postgresql)"
REDIS_PACKAGES = "redis-server (Debian/Ubuntu: apt-get install redis-server)"


def reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with closing(
            socket.create_connection((parts.hostname, parts.port or default_port), 2)
        ):
            return True
    except OSError:
        return False


def free_port() -> int:
    with closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def wait_until(check, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            sys.exit(f"services: {what} did not start within {seconds:.0f} s")
        time.sleep(0.2)


def as_postgres_user() -> list[str]:
    """initdb refuses to run as root: run the server as the 'postgres' user then."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        sys.exit(
            "services: running as root needs runuser (util-linux) to start PostgreSQL"
        )
    return ["runuser", "-u", "postgres", "--"]


@contextmanager
def throwaway_postgres(url: str):
    initdb, pg_ctl = postgres_binary("initdb"), postgres_binary("pg_ctl")
    if not (initdb and pg_ctl):
        sys.exit(
            f"services: PostgreSQL is not reachable at {url} and not installed: "
            f"install {POSTGRES_PACKAGES}, or set TEST_DATABASE_URL"
        )
    folder = Path(tempfile.mkdtemp(prefix="nuggets-pg-"))
    runner = as_postgres_user()
    if runner:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    subprocess.run(
        [*runner, initdb, "-A", "trust", "-U", "postgres", "-D", str(data)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [
            *runner,
            pg_ctl,
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "log"),
            "-w",
            "start",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    name = urlsplit(url).path.lstrip("/") or "nuggets"
    try:
        print(
            f"services: started a throwaway PostgreSQL on port {port}", file=sys.stderr
        )
        yield f"postgres://postgres@127.0.0.1:{port}/{name}"
    finally:
        subprocess.run(
            [*runner, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
            stdout=subprocess.DEVNULL,
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def throwaway_redis(url: str):
    server = shutil.which("redis-server")
    if not server:
        sys.exit(
            f"services: Redis is not reachable at {url} and not installed: "
            f"install {REDIS_PACKAGES}, or set TEST_REDIS_URL"
        )
    port = free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: reachable(f"redis://127.0.0.1:{port}", port), "Redis")
        print(f"services: started a throwaway Redis on port {port}", file=sys.stderr)
        db = urlsplit(url).path.lstrip("/") or "0"
        yield f"redis://127.0.0.1:{port}/{db}"
    finally:
        process.terminate()
        process.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", required=True)
    parser.add_argument("--redis", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with ExitStack() as stack:
        database, redis = args.database, args.redis
        if not reachable(database, 5432):
            database = stack.enter_context(throwaway_postgres(database))
        if not reachable(redis, 6379):
            redis = stack.enter_context(throwaway_redis(redis))
        env = {**os.environ, "DATABASE_URL": database, "REDIS_URL": redis}
        return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
