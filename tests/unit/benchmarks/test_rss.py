"""The scale benchmark's memory sampler reads process trees from /proc."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nuggets_app.benchmarks.rss import PeakSampler, rss_mb, tree_pids

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self"), reason="reads /proc (Linux)"
)


def test_a_tree_holds_its_root_and_its_children():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        pids = tree_pids([os.getpid()])
        assert os.getpid() in pids
        assert child.pid in pids
        assert child.pid not in tree_pids([os.getppid() + 10**9])  # no such root
    finally:
        child.kill()
        child.wait()


def test_the_sampler_gives_the_peaks_since_the_last_lap():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with PeakSampler(lambda: [child.pid], interval=0.05) as sampler:
            own, workers = sampler.lap()
        assert own >= rss_mb(os.getpid()) * 0.5 > 0
        assert workers > 0
    finally:
        child.kill()
        child.wait()
    assert rss_mb(child.pid) == 0.0  # gone
