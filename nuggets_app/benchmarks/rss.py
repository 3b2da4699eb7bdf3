"""Peak resident memory of this process and of worker process trees, sampled from
``/proc`` by a background thread (Linux; elsewhere every figure reads 0)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 1e6 if hasattr(os, "sysconf") else 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of one process in MB (0 when it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_MB
    except (OSError, IndexError, ValueError):
        return 0.0


def _parents() -> dict[int, int]:
    out = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces: the fields after its closing parenthesis.
        out[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return out


def tree_pids(roots: Iterable[int]) -> list[int]:
    """The processes ``roots`` and all their descendants."""
    parents = _parents()
    found = {r for r in roots if r in parents}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return sorted(found)


class PeakSampler:
    """Samples, every ``interval`` seconds, this process's memory and the summed
    memory of the process trees ``roots()`` returns; ``lap()`` gives the peaks since
    the last lap and starts new ones."""

    def __init__(self, roots: Callable[[], list[int]], interval: float = 0.25) -> None:
        self._roots = roots
        self._interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._peak = (0.0, 0.0)
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def sample(self) -> None:
        """Take one sample now."""
        own = rss_mb(os.getpid())
        workers = sum(rss_mb(p) for p in tree_pids(self._roots()))
        with self._lock:
            self._peak = (max(self._peak[0], own), max(self._peak[1], workers))

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample()

    def lap(self) -> tuple[float, float]:
        """(this process, the workers) peak MB since the last lap."""
        self.sample()
        with self._lock:
            peak, self._peak = self._peak, (0.0, 0.0)
        return peak
