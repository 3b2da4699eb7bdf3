"""The relevance model's semantic features: embeddings near the nuggets, the judged
relevant documents and the topic (the optional extra;
:mod:`nuggets_app.learning.embeddings`).

Pure and Django-free. A document ``d`` is given as the embeddings of its windows
(:func:`nuggets_app.learning.semantic.text_windows`, L2-normalised rows); its
*document vector* is the L2-normalised mean of its windows' (:func:`document_vector`).

Features (:data:`SEMANTIC_FEATURE_NAMES`, appended after
:data:`nuggets_app.learning.relevance_features.FEATURE_NAMES`):

``nugget_semantic_max`` / ``nugget_semantic_mean``
    Over the topic's nuggets except those extracted from ``d`` itself, the semantic
    score of ``d`` for the nugget (the highest cosine of the nugget to a window of
    ``d``, floored at 0): its maximum and its mean (0 without such a nugget).
``relevant_semantic``
    The mean cosine of ``d``'s document vector to those of the judged relevant
    documents other than ``d`` (0 without such a document).
``topic_semantic``
    The highest cosine of the topic statement (title and description) to a window of
    ``d``, floored at 0: what a dense retriever built on the same encoder would score,
    so that the model sees the relevance a neural ranker sees without shared terms
    (0 without a statement).

Leave-one-out as in :mod:`~nuggets_app.learning.relevance_features`: nothing in
the features of ``d`` depends on ``d``'s own label or on the nuggets extracted from
it, so a judged document is described as an unjudged one would be. (A maximum over
fewer nuggets is lower; the mean is given beside it for that reason, as the lexical
features give means.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

SEMANTIC_FEATURE_NAMES: tuple[str, ...] = (
    "nugget_semantic_max",
    "nugget_semantic_mean",
    "relevant_semantic",
    "topic_semantic",
)

Matrix = npt.NDArray[np.float32]


def document_vector(windows: Matrix) -> Matrix:
    """The L2-normalised mean of a document's window embeddings (zeros if none)."""
    if len(windows) == 0:
        return np.zeros(windows.shape[1] if windows.ndim == 2 else 0, np.float32)
    mean = windows.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    out: Matrix = (mean / norm if norm > 0 else mean).astype(np.float32)
    return out


@dataclass(frozen=True)
class SemanticEvidence:
    """A topic's nugget embeddings (rows) with their source docnos, the document
    vectors of its judged relevant documents, and its statement's embedding."""

    nuggets: Matrix
    sources: tuple[str | None, ...]
    relevant: Mapping[str, Matrix]
    relevant_sum: Matrix | None
    topic: Matrix | None = None


def semantic_evidence(
    *,
    nuggets: Sequence[tuple[Matrix, str | None]],
    relevant_windows: Mapping[str, Matrix],
    dimension: int,
    topic: Matrix | None = None,
) -> SemanticEvidence:
    """Evidence of one topic: ``(embedding, source docno)`` of each nugget, the
    window embeddings of each judged relevant document and the statement's embedding
    (``topic``, L2-normalised)."""
    matrix = (
        np.vstack([v for v, _ in nuggets]).astype(np.float32)
        if nuggets
        else np.zeros((0, dimension), np.float32)
    )
    relevant = {
        d: document_vector(w) for d, w in sorted(relevant_windows.items()) if len(w)
    }
    total = (
        np.sum(list(relevant.values()), axis=0).astype(np.float32) if relevant else None
    )
    return SemanticEvidence(
        matrix, tuple(s for _, s in nuggets), relevant, total, topic
    )


def semantic_features(
    evidence: SemanticEvidence, docno: str, windows: Matrix
) -> tuple[float, float, float, float]:
    """Raw semantic features of one document (module doc), leave-one-out."""
    keep = [i for i, source in enumerate(evidence.sources) if source != docno]
    nugget_max = nugget_mean = 0.0
    if keep and len(windows):
        sims = np.maximum((evidence.nuggets[keep] @ windows.T).max(axis=1), 0.0)
        nugget_max, nugget_mean = float(sims.max()), float(sims.mean())
    relevant = 0.0
    if evidence.relevant_sum is not None and len(windows):
        own = evidence.relevant.get(docno)
        count = len(evidence.relevant) - (own is not None)
        if count:
            total = (
                evidence.relevant_sum - own
                if own is not None
                else evidence.relevant_sum
            )
            relevant = float(document_vector(windows) @ total) / count
    topic = 0.0
    if evidence.topic is not None and len(windows):
        topic = max(float((windows @ evidence.topic).max()), 0.0)
    return nugget_max, nugget_mean, relevant, topic
