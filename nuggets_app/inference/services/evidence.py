"""Packed evidence of a matching chunk, and re-scoring from it without the matcher.

Packed evidence (one blob per chunk, little-endian arrays): for every document of the
chunk its id; for every (document, nugget) pair with a matched shingle the nugget id
and its number of shingles; for every matched shingle ``d = S - k`` and ``k``.
Re-scoring computes ``lam ** (d / k)`` once per distinct ``(d, k)`` (with Python's
``**``, so scores are bit-identical to the matcher's), sums per nugget in shingle
order, divides by the shingle count, and keeps per document the best nugget, ties to
the first nugget in input order, exactly as ``matcher.rescore`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

_HEADER = np.dtype("<i8")


# Shingle sizes are far below this; (d, k) pairs are coded as d * _K_LIMIT + k.
_K_LIMIT = 1 << 20


_LAYOUT = (
    ("docs", "<i8"),
    ("entry_doc", "<i4"),
    ("entry_nugget", "<i8"),
    ("entry_shingles", "<i4"),
    ("term_entry", "<i4"),
    ("term_d", "<i4"),
    ("term_k", "<i4"),
)


def evidence_pack(evidences: Iterable[tuple[int, Any]]) -> bytes:
    """Pack ``(document id, matcher.Evidence)`` pairs into one compact blob."""
    docs: list[int] = []
    entry_doc: list[int] = []
    entry_nugget: list[int] = []
    entry_shingles: list[int] = []
    term_entry: list[int] = []
    term_d: list[int] = []
    term_k: list[int] = []
    for doc_index, (doc_id, evidence) in enumerate(evidences):
        docs.append(doc_id)
        for item in evidence.nuggets:
            entry = len(entry_doc)
            entry_doc.append(doc_index)
            entry_nugget.append(int(item.nugget))
            entry_shingles.append(len(item.sizes))
            for s, k in zip(item.lengths, item.sizes, strict=True):
                if s is not None:
                    term_entry.append(entry)
                    term_d.append(s - k)
                    term_k.append(k)
    columns = (
        docs,
        entry_doc,
        entry_nugget,
        entry_shingles,
        term_entry,
        term_d,
        term_k,
    )
    header = np.array([len(c) for c in columns], dtype=_HEADER)
    parts = [header.tobytes()]
    for (_, dtype), values in zip(_LAYOUT, columns, strict=True):
        parts.append(np.asarray(values, dtype=dtype).tobytes())
    return b"".join(parts)


def evidence_unpack(blob: bytes) -> dict[str, np.ndarray]:
    """The arrays of :func:`evidence_pack`, by name."""
    sizes = np.frombuffer(blob, dtype=_HEADER, count=len(_LAYOUT))
    offset = sizes.nbytes
    out = {}
    for (name, dtype), n in zip(_LAYOUT, sizes, strict=True):
        dt = np.dtype(dtype)
        out[name] = np.frombuffer(blob, dtype=dt, count=int(n), offset=offset)
        offset += int(n) * dt.itemsize
    return out


def evidence_rescore(
    blobs: Sequence[bytes], lam: float
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per blob: (document ids, scores, best nugget id or -1) for ``lam``."""
    decay: dict[int, float] = {}
    return [_rescore_one(evidence_unpack(blob), lam, decay) for blob in blobs]


def _rescore_one(
    a: dict[str, np.ndarray], lam: float, decay: dict[int, float]
) -> tuple:
    docs = a["docs"]
    scores = np.zeros(len(docs), dtype=np.float64)
    nuggets = np.full(len(docs), -1, dtype=np.int64)
    n_entries = len(a["entry_doc"])
    if n_entries == 0:
        return docs, scores, nuggets
    entry_scores = _entry_scores(a, lam, decay)
    entry_index = np.arange(n_entries)
    order = np.lexsort((entry_index, -entry_scores, a["entry_doc"]))
    first = np.ones(n_entries, dtype=bool)
    first[1:] = a["entry_doc"][order][1:] != a["entry_doc"][order][:-1]
    best = order[first]
    positive = entry_scores[best] > 0
    best = best[positive]
    scores[a["entry_doc"][best]] = entry_scores[best]
    nuggets[a["entry_doc"][best]] = a["entry_nugget"][best]
    return docs, scores, nuggets


def _entry_scores(a: dict[str, np.ndarray], lam: float, decay: dict[int, float]):
    """The score of every (document, nugget) entry of unpacked evidence."""
    codes = a["term_d"].astype(np.int64) * _K_LIMIT + a["term_k"]
    distinct, inverse = np.unique(codes, return_inverse=True)
    for code in distinct.tolist():
        if code not in decay:
            d, k = divmod(code, _K_LIMIT)
            decay[code] = lam ** (d / k)
    weights = np.array([decay[c] for c in distinct.tolist()], dtype=np.float64)[inverse]
    # bincount adds in array order, i.e. in shingle order, like the matcher's loop.
    totals = np.bincount(
        a["term_entry"], weights=weights, minlength=len(a["entry_doc"])
    )
    return totals / a["entry_shingles"]


def evidence_nugget_scores(blob: bytes, lam: float) -> dict[int, dict[int, float]]:
    """{document id: {nugget id: score}} of every matched (document, nugget) entry of a
    packed chunk (a nugget absent for a document scores 0 there)."""
    a = evidence_unpack(blob)
    out: dict[int, dict[int, float]] = {}
    if len(a["entry_doc"]) == 0:
        return out
    scores = _entry_scores(a, lam, {})
    docs = a["docs"].tolist()
    for doc_index, nugget, score in zip(
        a["entry_doc"].tolist(),
        a["entry_nugget"].tolist(),
        scores.tolist(),
        strict=True,
    ):
        out.setdefault(int(docs[doc_index]), {})[int(nugget)] = float(score)
    return out


def evidence_scores_without(
    blob: bytes, lam: float, excluded: dict[int, set[int]]
) -> dict[int, float]:
    """{document id: score against every nugget but its ``excluded`` ones} for the
    documents of ``excluded`` in the blob (0 when no other nugget matches)."""
    a = evidence_unpack(blob)
    out = {int(d): 0.0 for d in a["docs"].tolist() if int(d) in excluded}
    if not out or len(a["entry_doc"]) == 0:
        return out
    scores = _entry_scores(a, lam, {})
    for entry, (doc_index, nugget) in enumerate(
        zip(a["entry_doc"].tolist(), a["entry_nugget"].tolist(), strict=True)
    ):
        doc_id = int(a["docs"][doc_index])
        if doc_id in out and nugget not in excluded[doc_id]:
            out[doc_id] = max(out[doc_id], float(scores[entry]))
    return out
