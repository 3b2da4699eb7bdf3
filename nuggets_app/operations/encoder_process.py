"""The model in a child process, for the processes that serve people.

Without a broker a web process embeds a saved nugget after the response, on its
background thread. Running the model on that thread slowed every request beside it,
even niced: the thread holds the GIL between numpy's calls, and a niced thread that
holds it stalls the request threads waiting for it (50 assessors, two cores: move p95
313 ms with the extra against 146 ms without). :class:`EncoderProcess` runs the model
in a child process at a low CPU priority instead; the thread only waits on a pipe.

The child is ``python -m nuggets_app.operations.encoder_process``. It reads requests
on its standard input and answers on its standard output, loads the model on the
first request, and exits when its parent closes the pipe (the parent stopped) or after
:data:`IDLE_SECONDS` without a request (its memory back; the next request starts a
new child). A request is a 4-byte big-endian length and a JSON list of texts; the
answer is a status byte (``o`` ok, ``e`` error), a 4-byte length, and the vectors as
little-endian float32 rows, or the error's message.

Pure and Django-free, like the model.
"""

from __future__ import annotations

import json
import os
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np

from nuggets_app.learning import embeddings

# Nice value of the child, the lowest priority: the request processes (0) get the CPU
# first, the embeddings what is left (on two cores serving 50 assessors, enough).
NICENESS = 19
# A child with nothing to do this long exits (the model's memory, about 100 MB, back).
IDLE_SECONDS = 600.0
_LENGTH = struct.Struct(">I")
_ROOT = Path(__file__).resolve().parents[2]


class EncoderProcess:
    """:meth:`embed` as :class:`~nuggets_app.learning.embeddings.Encoder`'s, computed
    by a child process started on first use (and again if it exited)."""

    def __init__(
        self, *, niceness: int = NICENESS, idle_seconds: float = IDLE_SECONDS
    ) -> None:
        self.niceness = niceness
        self.idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    def embed(self, texts: Sequence[str]) -> embeddings.Matrix:
        """L2-normalised embeddings of ``texts``, shape ``(len(texts), 384)``."""
        if not texts:
            return np.zeros((0, embeddings.DIMENSION), dtype=np.float32)
        request = json.dumps(list(texts)).encode("utf-8")
        with self._lock:
            # A child that exited (idle, or killed) since the last request is started
            # again, once: a second failure is the model's, and is raised.
            for attempt in (1, 2):
                child = self._running()
                try:
                    return _ask(child, request, len(texts))
                except (BrokenPipeError, EOFError):
                    self._stop()
                    if attempt == 2:
                        raise embeddings.EmbeddingError(
                            "the embedding process stopped twice"
                        ) from None
        raise AssertionError("unreachable")

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        child = self._child
        return child.pid if child is not None and child.poll() is None else None

    def close(self) -> None:
        """Stop the child (it exits when its input closes)."""
        with self._lock:
            self._stop()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    __name__,
                    str(self.niceness),
                    str(self.idle_seconds),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=_ROOT,
            )
        return self._child

    def _stop(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _ask(
    child: subprocess.Popen[bytes], request: bytes, rows: int
) -> embeddings.Matrix:
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write(_LENGTH.pack(len(request)) + request)
    child.stdin.flush()
    status = _read(child.stdout, 1)
    payload = _read(child.stdout, _LENGTH.unpack(_read(child.stdout, 4))[0])
    if status != b"o":
        raise embeddings.EmbeddingError(payload.decode("utf-8", "replace"))
    vectors = np.frombuffer(payload, dtype="<f4").reshape(rows, embeddings.DIMENSION)
    return vectors.astype(np.float32)


def _read(stream: IO[bytes], size: int) -> bytes:
    # A pipe may hand over a long message in pieces.
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other end of the pipe closed it")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def serve(
    requests: IO[bytes], answers: IO[bytes], *, idle_seconds: float = IDLE_SECONDS
) -> None:
    """Answer requests until ``requests`` closes or stays silent ``idle_seconds``."""
    encoder: embeddings.Encoder | None = None
    while select.select([requests], [], [], idle_seconds)[0]:
        try:
            head = _read(requests, 4)
        except EOFError:
            return
        texts = json.loads(_read(requests, _LENGTH.unpack(head)[0]))
        try:
            encoder = encoder or embeddings.load_encoder()
            status, payload = b"o", encoder.embed(texts).astype("<f4").tobytes()
        except Exception as error:  # the parent raises it as EmbeddingError
            status, payload = b"e", f"{type(error).__name__}: {error}".encode()
        answers.write(status + _LENGTH.pack(len(payload)) + payload)
        answers.flush()


def main(argv: Sequence[str]) -> None:
    niceness, idle_seconds = int(argv[0]), float(argv[1])
    os.setpriority(
        os.PRIO_PROCESS, 0, max(niceness, os.getpriority(os.PRIO_PROCESS, 0))
    )
    # The answers get the real standard output to themselves: anything printed by
    # what the model imports goes to the standard error instead.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    serve(requests, answers, idle_seconds=idle_seconds)


if __name__ == "__main__":
    main(sys.argv[1:])
