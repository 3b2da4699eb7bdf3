"""The packaged sentence-embedding model: found, checked, and equal to the reference.

The reference vectors in ``tests/data/semantic/minilm_reference.json`` were computed by
sentence-transformers with PyTorch from the same packaged model folder, not by this
code. Tests of the model skip only when the extra (requirements-semantic.txt) is not
installed; CI installs it.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from nuggets_app.learning import embeddings

REFERENCE = Path(__file__).parents[2] / "data" / "semantic" / "minilm_reference.json"
needs_model = pytest.mark.skipif(
    not embeddings.semantic_available(),
    reason=embeddings.OFF_MESSAGE,
)


@needs_model
def test_embeddings_equal_sentence_transformers_reference() -> None:
    reference = json.loads(REFERENCE.read_text())
    vectors = embeddings.load_encoder().embed(reference["texts"])
    expected = np.array(reference["embeddings"], dtype=np.float32)
    assert vectors.shape == (5, embeddings.DIMENSION)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected, atol=2e-6)


@needs_model
def test_a_paraphrase_is_nearer_than_an_unrelated_sentence() -> None:
    encoder = embeddings.load_encoder()
    vectors = encoder.embed(["Corona, CA", "city of Corona", "200 wounded"])
    sims = embeddings.cosine(vectors[:1], vectors[1:])[0]
    assert sims[0] > 0.8
    assert sims[1] < 0.3


@needs_model
def test_the_model_is_loaded_once_per_process() -> None:
    assert embeddings.load_encoder() is embeddings.load_encoder()


@needs_model
def test_batching_and_order_do_not_change_an_embedding() -> None:
    texts = ["short", "a much longer sentence about the storm " * 5, "medium text"]
    encoder = embeddings.load_encoder()
    together = encoder.embed(texts, batch_size=2)
    alone = np.vstack([encoder.embed([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


@needs_model
def test_a_text_longer_than_the_model_allows_is_truncated() -> None:
    vectors = embeddings.load_encoder().embed(["flood " * 2000])
    assert np.isfinite(vectors).all()
    assert abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5


@needs_model
def test_altered_weights_are_refused(tmp_path: Path) -> None:
    source = embeddings.model_zip_path()
    assert source is not None
    altered = tmp_path / "model.zip"
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(altered, "w") as dst:
        for item in src.infolist():
            blob = src.read(item)
            if item.filename == "model.safetensors":
                blob = blob[:-1] + bytes([blob[-1] ^ 1])
            dst.writestr(item, blob)
    with pytest.raises(embeddings.EmbeddingError, match=r"model\.safetensors.*sha256"):
        embeddings.read_model(altered)


def test_no_embedding_is_empty() -> None:
    assert embeddings.from_bytes([]).shape == (0, embeddings.DIMENSION)


def test_stored_bytes_round_trip() -> None:
    vectors = np.arange(2 * embeddings.DIMENSION, dtype=np.float32).reshape(2, -1)
    blobs = embeddings.to_bytes(vectors)
    assert [len(b) for b in blobs] == [4 * embeddings.DIMENSION] * 2
    np.testing.assert_array_equal(embeddings.from_bytes(blobs), vectors)


def test_status_names_the_extra_when_the_model_is_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embeddings, "model_zip_path", lambda: None)
    assert not embeddings.semantic_available()
    assert embeddings.semantic_status() == (
        "semantic evidence: off (install requirements-semantic.txt)"
    )
    with pytest.raises(embeddings.EmbeddingError, match="requirements-semantic"):
        embeddings.read_model(None)


def test_the_extra_can_be_switched_off_and_a_bad_switch_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(embeddings, "model_zip_path", lambda: Path("model.zip"))
    monkeypatch.setenv("SEMANTIC_EVIDENCE", "off")
    assert not embeddings.semantic_available()
    assert embeddings.semantic_status() == (
        "semantic evidence: off (SEMANTIC_EVIDENCE=off)"
    )
    monkeypatch.setenv("SEMANTIC_EVIDENCE", "maybe")
    with pytest.raises(
        embeddings.EmbeddingError, match="'maybe' is neither on nor off"
    ):
        embeddings.semantic_available()
