"""The background queue without a broker: calls under one name waiting together run
once with their ids merged, after the caller returned, and every id is run."""

from __future__ import annotations

import threading

from nuggets_app.operations import background


def test_waiting_calls_of_one_name_run_once_with_their_ids_merged():
    runs: list[tuple[str, list[int]]] = []
    started, release = threading.Event(), threading.Event()

    def blocker(ids: list[int]) -> None:
        started.set()
        release.wait(10)

    def record(name: str):
        return lambda ids: runs.append((name, ids))

    background.background_submit("block", blocker, [0])
    assert started.wait(10)
    # While the thread is busy these wait: two names, ids repeated and unordered.
    background.background_submit("a", record("a"), [3, 1])
    background.background_submit("b", record("b"), [7])
    background.background_submit("a", record("a"), [2, 3])
    assert runs == []
    release.set()
    assert background.background_wait(10)
    assert runs == [("a", [1, 2, 3]), ("b", [7])]


def test_a_failing_run_is_logged_and_the_next_one_runs(caplog):
    runs: list[list[int]] = []

    def fail(ids: list[int]) -> None:
        raise ValueError("broken")

    background.background_submit("fail", fail, [1])
    background.background_submit("after", runs.append, [2])
    assert background.background_wait(10)
    assert runs == [[2]]
    assert "background task fail([1]) failed" in caplog.text
