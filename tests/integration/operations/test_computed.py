"""Kept computations: computed once per parameters and input versions, progress while
running, errors kept or retried, and the same through a real Celery worker."""

import time
import uuid

import pytest
from django.core.cache import cache

from nuggets_app.errors import DomainError
from nuggets_app.operations.services.computed import computed

# The test computations' inputs: their "version" is this value, changed by the tests.
INPUTS = {"version": 1}
RUNS: list[dict] = []


def _versions(**params):
    return [INPUTS["version"]]


@computed(versions=_versions)
def total(*, values: list[int], token: str, progress) -> int:
    """Sums ``values``, reporting a step per value; what it saw is kept in RUNS."""
    seen = []
    for done, _ in enumerate(values, 1):
        progress(done, len(values))
        seen.append(total.get(values=values, token=token))
    RUNS.append({"token": token, "seen": seen})
    return sum(values)


@computed(versions=_versions)
def refuse(*, token: str, progress) -> int:
    RUNS.append({"token": token})
    raise DomainError(f"no such thing as {token}")


@computed(versions=_versions)
def crash(*, token: str, progress) -> int:
    RUNS.append({"token": token})
    raise RuntimeError("the database went away")


@computed(versions=_versions)
def slow_sum(*, values: list[int], token: str, progress) -> int:
    """What a worker computes: a few steps with a pause, to be watched in progress."""
    for done, _ in enumerate(values, 1):
        time.sleep(0.3)
        progress(done, len(values))
    return sum(values)


@pytest.fixture
def tasks_in_process():
    from nuggets_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    RUNS.clear()
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def token():
    """Parameters no earlier run of the suite kept a result for."""
    return uuid.uuid4().hex


def test_a_result_is_computed_once_and_kept(tasks_in_process, token):
    first = total.get(values=[1, 2, 3], token=token)
    second = total.get(values=[1, 2, 3], token=token)
    assert (first.status, first.value) == ("done", 6)
    assert (second.status, second.value) == ("done", 6)
    assert len(RUNS) == 1
    assert total.get(values=[1, 2], token=token).value == 3
    assert len(RUNS) == 2


def test_peeking_starts_nothing_and_then_sees_the_kept_result(tasks_in_process, token):
    assert total.peek(values=[1, 2], token=token) is None
    assert RUNS == []
    total.get(values=[1, 2], token=token)
    seen = total.peek(values=[1, 2], token=token)
    assert (seen.status, seen.value) == ("done", 3)
    assert len(RUNS) == 1
    INPUTS["version"] += 1
    assert total.peek(values=[1, 2], token=token) is None


def test_progress_is_visible_while_computing(tasks_in_process, token):
    total.get(values=[5, 5, 5, 5], token=token)
    (run,) = RUNS
    assert {o.status for o in run["seen"]} == {"running"}
    assert run["seen"][0].total == 4
    assert run["seen"][0].done == 1


def test_changed_inputs_compute_afresh_without_any_timer(tasks_in_process, token):
    total.get(values=[1], token=token)
    INPUTS["version"] += 1
    total.get(values=[1], token=token)
    total.get(values=[1], token=token)
    assert len(RUNS) == 2


def test_bad_input_is_kept_as_an_error(tasks_in_process, token):
    for _ in range(2):
        outcome = refuse.get(token=token)
        assert outcome.status == "failed"
        assert outcome.error == f"no such thing as {token}"
    assert len(RUNS) == 1


def test_an_unexpected_failure_is_not_kept(tasks_in_process, token):
    for _ in range(2):
        with pytest.raises(RuntimeError, match="went away"):
            crash.get(token=token)
    assert len(RUNS) == 2


def test_a_computation_that_stopped_reporting_is_restarted(
    tasks_in_process, token, settings
):
    key = total.key(values=[2], token=token)
    stuck = {"status": "running", "done": 0, "total": 1, "at": time.time() - 10}
    cache.set(key, stuck)
    assert total.get(values=[2], token=token).status == "running"
    assert RUNS == []
    settings.COMPUTED_STALE_SECONDS = 5
    assert total.get(values=[2], token=token).value == 2
    assert len(RUNS) == 1


@pytest.mark.django_db(transaction=True)
def test_a_worker_computes_while_the_caller_sees_progress(celery_worker, token):
    outcome = slow_sum.get(values=[1, 2, 3, 4, 5, 6], token=token)
    assert outcome.status == "running"
    seen = []
    deadline = time.monotonic() + 60
    while outcome.status == "running" and time.monotonic() < deadline:
        seen.append(outcome.done)
        time.sleep(0.2)
        outcome = slow_sum.get(values=[1, 2, 3, 4, 5, 6], token=token)
    assert (outcome.status, outcome.value) == ("done", 21), celery_worker.log()
    assert any(0 < done < 6 for done in seen)
