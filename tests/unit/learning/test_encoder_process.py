"""The model in a child process: the same vectors as this process's model, computed at
a lower CPU priority, and a child that exited (idle, killed) started again."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from nuggets_app.learning import embeddings
from nuggets_app.operations.encoder_process import EncoderProcess

pytestmark = pytest.mark.skipif(
    not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE
)

TEXTS = [
    "thermo-aeroelastic similarity",
    "the boundary layer of a flat plate in supersonic flow",
    "heat transfer " * 120,  # longer than the model's 256 tokens, several batches
    *(f"nugget number {i} about wings" for i in range(10)),
]


@pytest.fixture
def child():
    process = EncoderProcess()
    yield process
    process.close()


def _exited(process: EncoderProcess, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.pid is None:
            return True
        time.sleep(0.05)
    return False


def test_the_child_embeds_as_this_process_at_a_lower_priority(child):
    vectors = child.embed(TEXTS)
    np.testing.assert_allclose(
        vectors, embeddings.load_encoder().embed(TEXTS), rtol=0, atol=1e-6
    )
    assert vectors.dtype == np.float32
    assert child.pid is not None
    assert child.pid != os.getpid()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, child.pid) == max(ours, child.niceness)


def test_nothing_to_embed_starts_no_child(child):
    assert child.embed([]).shape == (0, embeddings.DIMENSION)
    assert child.pid is None


def test_a_killed_child_is_started_again(child):
    first = child.embed(TEXTS[:1])
    pid = child.pid
    os.kill(pid, signal.SIGKILL)
    assert _exited(child)
    np.testing.assert_array_equal(child.embed(TEXTS[:1]), first)
    assert child.pid not in (None, pid)


def test_an_idle_child_exits_and_the_next_request_starts_one():
    process = EncoderProcess(idle_seconds=0.5)
    try:
        first = process.embed(TEXTS[:2])
        assert _exited(process)
        np.testing.assert_array_equal(process.embed(TEXTS[:2]), first)
    finally:
        process.close()


def test_an_error_in_the_child_is_raised_here_and_the_child_serves_on(child):
    with pytest.raises(embeddings.EmbeddingError, match="TypeError"):
        child.embed([1, 2])  # type: ignore[list-item]
    pid = child.pid
    assert child.embed(TEXTS[:1]).shape == (1, embeddings.DIMENSION)
    assert child.pid == pid


def test_a_closed_child_exits(child):
    child.embed(TEXTS[:1])
    pid = child.pid
    child.close()
    assert child.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
