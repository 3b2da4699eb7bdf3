"""Embeddings kept in the database: documents in chunks on the workers, nuggets on save.

Every row is computed once per unit and model (``UnitEmbedding``, ``NuggetEmbedding``)
and reused by every job and run; a nugget saved by an assessor is embedded by a worker
after the commit (``nuggets_app.judging.services.nuggets``), or without a broker by the
process's background thread after the response: pages only read stored vectors and
ask for the missing ones (:func:`embeddings_request`). A collection is embedded by an :class:`EmbeddingJob`
(:func:`embedding_job_launch`): the documents without embeddings are split into
chunks of ``settings.EMBED_CHUNK_SIZE`` sent to the workers (``embed_chunk``); a chunk
embeds only those of its documents still without rows, so a redelivered chunk or a
resumed job (:func:`embedding_job_resume`) repeats nothing. Progress is counted on the
job row with ``F()`` increments. Without the extra (``requirements-semantic.txt``)
nothing is launched and :func:`semantic_status` says why.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from nuggets_app.errors import DomainError
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import (
    DEFAULT_MAX_WORDS,
    nearest_windows,
    text_windows,
)
from nuggets_app.models import (
    Collection,
    Document,
    EmbeddingJob,
    Nugget,
    NuggetEmbedding,
    UnitEmbedding,
)
from nuggets_app.operations import queue

MODEL = embeddings.MODEL_NAME


class SemanticOff(DomainError):
    """The semantic extra is not installed."""


def semantic_status() -> str:
    """The line pages and commands show: semantic evidence on, or off and why."""
    return embeddings.semantic_status()


def semantic_on() -> bool:
    """Whether the extra is installed."""
    return embeddings.semantic_available()


def _require() -> None:
    if not embeddings.semantic_available():
        raise SemanticOff(embeddings.OFF_MESSAGE)


def _missing(collection_id: int, model: str) -> Any:
    has = UnitEmbedding.objects.filter(document=OuterRef("pk"), model=model)
    return Document.objects.filter(collection_id=collection_id).exclude(Exists(has))


def embedding_job_launch(
    *, collection: Collection, max_words: int = DEFAULT_MAX_WORDS
) -> EmbeddingJob:
    """A job embedding every document of ``collection`` not embedded yet."""
    _require()
    with transaction.atomic():
        job = EmbeddingJob.objects.create(
            collection=collection, model=MODEL, max_words=max_words
        )
        _enqueue_missing(job)
    return job


def embedding_job_resume(*, job: EmbeddingJob) -> EmbeddingJob:
    """Send again the chunks of the documents still without embeddings."""
    _require()
    with transaction.atomic():
        job = EmbeddingJob.objects.select_for_update().get(pk=job.pk)
        job.status = EmbeddingJob.Status.RUNNING
        job.finished_at = None
        job.save(update_fields=["status", "finished_at"])
        _enqueue_missing(job)
    return job


def _enqueue_missing(job: EmbeddingJob) -> None:
    ids = list(
        _missing(job.collection_id, job.model)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    size = settings.EMBED_CHUNK_SIZE
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    EmbeddingJob.objects.filter(pk=job.pk).update(docs_total=F("docs_done") + len(ids))
    if not chunks:
        _finish_if_done(job.pk)
    pk = job.pk
    for chunk in chunks:
        transaction.on_commit(
            lambda c=chunk: queue.task_enqueue(queue.EMBED_CHUNK, pk, c)
        )


def embed_chunk_run(*, job_id: int, document_ids: Sequence[int]) -> dict[str, int]:
    """Embed the documents of one chunk that have no embedding of the job's model."""
    job = EmbeddingJob.objects.filter(pk=job_id).first()
    if job is None or job.status != EmbeddingJob.Status.RUNNING:
        return {"documents": 0, "units": 0}
    started = time.monotonic()
    docs = list(
        _missing(job.collection_id, job.model)
        .filter(pk__in=document_ids)
        .only("pk", "text")
        .order_by("pk")
    )
    units = documents_embed(docs, model=job.model, max_words=job.max_words)
    EmbeddingJob.objects.filter(pk=job_id).update(
        docs_done=F("docs_done") + len(docs),
        units_done=F("units_done") + units,
        seconds=F("seconds") + (time.monotonic() - started),
    )
    _finish_if_done(job_id)
    return {"documents": len(docs), "units": units}


def _finish_if_done(job_id: int) -> None:
    job = EmbeddingJob.objects.get(pk=job_id)
    if not _missing(job.collection_id, job.model).exists():
        EmbeddingJob.objects.filter(
            pk=job_id, status=EmbeddingJob.Status.RUNNING
        ).update(status=EmbeddingJob.Status.DONE, finished_at=timezone.now())


def documents_embed(
    documents: Iterable[Document], *, model: str = MODEL, max_words: int
) -> int:
    """Embed each document's windows and store them (existing rows kept); returns
    the number of windows embedded."""
    _require()
    rows: list[UnitEmbedding] = []
    texts: list[str] = []
    for doc in documents:
        windows = text_windows(doc.text, max_words=max_words)
        if not windows:
            rows.append(UnitEmbedding(document=doc, model=model, start=0, end=0))
            rows[-1].vector = b""
        for window in windows:
            rows.append(
                UnitEmbedding(
                    document=doc, model=model, start=window.start, end=window.end
                )
            )
            texts.append(doc.text[window.start : window.end])
    blobs = iter(embeddings.to_bytes(embeddings.encoder().embed(texts)))
    for row in rows:
        if row.end > row.start:
            row.vector = next(blobs)
    UnitEmbedding.objects.bulk_create(rows, ignore_conflicts=True, batch_size=500)
    return len(texts)


def text_vectors(texts: Sequence[str]) -> np.ndarray:
    """Embeddings of texts that are not stored (an answer's windows): rows in order."""
    _require()
    return embeddings.encoder().embed(list(texts))


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def nuggets_embed(*, nugget_ids: Sequence[int], model: str = MODEL) -> int:
    """Embed the nuggets whose text has no embedding yet (new or edited); returns
    how many were embedded."""
    _require()
    nuggets = list(Nugget.objects.filter(pk__in=nugget_ids).only("pk", "text"))
    kept = {
        (row.nugget_id, row.text_sha1)
        for row in NuggetEmbedding.objects.filter(nugget__in=nuggets, model=model).only(
            "nugget_id", "text_sha1"
        )
    }
    todo = [n for n in nuggets if (n.pk, _sha1(n.text)) not in kept]
    if not todo:
        return 0
    vectors = embeddings.to_bytes(embeddings.encoder().embed([n.text for n in todo]))
    NuggetEmbedding.objects.bulk_create(
        [
            NuggetEmbedding(
                nugget=n, model=model, text_sha1=_sha1(n.text), vector=vector
            )
            for n, vector in zip(todo, vectors, strict=True)
        ],
        update_conflicts=True,
        unique_fields=["nugget", "model"],
        update_fields=["text_sha1", "vector"],
    )
    return len(todo)


# A document's windows are written once per model and never again (a document with
# rows is never embedded again): a process keeps those it has read, so the requests of
# one document (the prefetch, the refresh after a nugget change, the next assessor)
# read its vectors once. About 15 KB a document.
_WINDOWS: dict[tuple[int, str], tuple[list[tuple[int, int]], np.ndarray]] = {}
_WINDOWS_LIMIT = 1_000


def document_windows(
    document_ids: Iterable[int], *, model: str = MODEL
) -> dict[int, tuple[list[tuple[int, int]], np.ndarray]]:
    """Stored windows of each document: ``([(start, end), ...], vectors)``, the
    vectors read-only; documents without rows are absent."""
    found, missing = {}, []
    for doc in document_ids:
        kept = _WINDOWS.get((doc, model))
        if kept is None:
            missing.append(doc)
        else:
            found[doc] = kept
    if not missing:
        return found
    read = _windows_read(missing, model=model)
    if len(_WINDOWS) + len(read) > _WINDOWS_LIMIT:
        _WINDOWS.clear()
    if len(read) <= _WINDOWS_LIMIT:
        _WINDOWS.update(((doc, model), windows) for doc, windows in read.items())
    return found | read


def _windows_read(
    document_ids: list[int], *, model: str
) -> dict[int, tuple[list[tuple[int, int]], np.ndarray]]:
    out: dict[int, tuple[list[tuple[int, int]], list[bytes]]] = {}
    rows = (
        UnitEmbedding.objects.filter(document_id__in=document_ids, model=model)
        .order_by("document_id", "start", "end")
        .values_list("document_id", "start", "end", "vector")
    )
    for doc, start, end, vector in rows.iterator(chunk_size=2000):
        spans, blobs = out.setdefault(doc, ([], []))
        if end > start:
            spans.append((start, end))
            blobs.append(bytes(vector))
    windows = {}
    for doc, (spans, blobs) in out.items():
        vectors = embeddings.from_bytes(blobs)
        vectors.flags.writeable = False
        windows[doc] = (spans, vectors)
    return windows


# (nugget id, text, model) -> vector: a text's embedding never changes, so a process
# keeps what it read. Every judging move reads the topic's nuggets' vectors; reading
# them all from the database cost a move 18-20 ms of CPU at 300 nuggets.
_VECTORS: dict[tuple[int, str, str], np.ndarray] = {}
_VECTORS_LIMIT = 100_000


def nugget_vectors(
    nugget_ids: Iterable[int],
    *,
    model: str = MODEL,
    texts: Mapping[int, str] | None = None,
) -> dict[int, np.ndarray]:
    """Stored embeddings of these nuggets (current text only; ``texts``: the current
    texts by id, when the caller has them, else read). Those read once are kept by the
    process under their text: an edited text is looked up afresh."""
    if texts is None:
        texts = dict(
            Nugget.objects.filter(pk__in=list(nugget_ids)).values_list("pk", "text")
        )
    found: dict[int, np.ndarray] = {}
    missing: dict[int, str] = {}
    for pk, text in texts.items():
        vector = _VECTORS.get((pk, text, model))
        if vector is None:
            missing[pk] = text
        else:
            found[pk] = vector
    if not missing:
        return found
    rows = NuggetEmbedding.objects.filter(nugget_id__in=list(missing), model=model)
    if len(_VECTORS) >= _VECTORS_LIMIT:
        _VECTORS.clear()
    for pk, sha1, blob in rows.values_list("nugget_id", "text_sha1", "vector"):
        text = missing[pk]
        if _sha1(text) == sha1:
            found[pk] = _VECTORS[(pk, text, model)] = embeddings.from_bytes(
                [bytes(blob)]
            )[0]
    return found


def stored_nearest(
    *,
    document: Document,
    nugget_ids: Iterable[int],
    model: str = MODEL,
    texts: Mapping[int, str] | None = None,
) -> dict[int, dict[str, Any]]:
    """For each nugget whose current text has a stored embedding, the stored window
    of ``document`` nearest to it (see :func:`stored_semantic`)."""
    return stored_semantic(
        document=document, nugget_ids=nugget_ids, model=model, texts=texts
    )[0]


def stored_semantic(
    *,
    document: Document,
    nugget_ids: Iterable[int],
    model: str = MODEL,
    texts: Mapping[int, str] | None = None,
) -> tuple[dict[int, dict[str, Any]], set[int]]:
    """For each nugget whose current text has a stored embedding, the stored window
    of ``document`` nearest to it: ``{"similarity", "start", "end", "sentence"}``;
    and the nuggets whose current text is not embedded yet (pending). Embeds nothing
    (({}, set()) without the extra; no windows before the document is embedded), so a
    page a person waits for never runs the model (``texts``: the nuggets' current
    texts, saving a query)."""
    if not embeddings.semantic_available():
        return {}, set()
    if texts is None:
        texts = dict(
            Nugget.objects.filter(pk__in=list(nugget_ids)).values_list("pk", "text")
        )
    spans, windows = document_windows([document.pk], model=model).get(
        document.pk, ([], embeddings.from_bytes([]))
    )
    if not spans:
        return {}, nuggets_unembedded(texts, model=model)
    vectors = nugget_vectors(texts, model=model, texts=texts)
    pending = set(texts) - set(vectors)
    if not vectors:
        return {}, pending
    ids = sorted(vectors)
    best, similarity = nearest_windows(windows, np.vstack([vectors[i] for i in ids]))
    text = document.text
    nearest = {
        i: {
            "similarity": sim,
            "start": spans[w][0],
            "end": spans[w][1],
            "sentence": text[spans[w][0] : spans[w][1]],
        }
        for i, w, sim in zip(ids, best, similarity, strict=True)
        if w >= 0
    }
    return nearest, pending


def nuggets_unembedded(texts: Mapping[int, str], *, model: str = MODEL) -> set[int]:
    """The nuggets whose current text has no stored embedding (vectors not read)."""
    stored = NuggetEmbedding.objects.filter(nugget_id__in=list(texts), model=model)
    kept = set(stored.values_list("nugget_id", "text_sha1"))
    return {pk for pk, text in texts.items() if (pk, _sha1(text)) not in kept}


def embeddings_request(
    *, document_ids: Sequence[int] = (), nugget_ids: Sequence[int] = ()
) -> bool:
    """Ask for the embeddings still missing among these documents and nuggets (their
    current texts), computed by a worker, or after the response on this process's
    background thread without a broker: never in the caller. True when some are
    missing (a page then says they are pending)."""
    if not embeddings.semantic_available():
        return False
    has = UnitEmbedding.objects.filter(document=OuterRef("pk"), model=MODEL)
    docs = list(
        Document.objects.filter(pk__in=list(document_ids))
        .exclude(Exists(has))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    texts = dict(
        Nugget.objects.filter(pk__in=list(nugget_ids)).values_list("pk", "text")
    )
    nuggets = sorted(nuggets_unembedded(texts))
    if docs:
        _enqueue_after_commit(queue.EMBED_DOCUMENTS, docs)
    if nuggets:
        _enqueue_after_commit(queue.EMBED_NUGGETS, nuggets)
    return bool(docs or nuggets)


def _enqueue_after_commit(task_name: str, ids: list[int]) -> None:
    # Robust: a broker error is logged; the page still shows what is stored.
    transaction.on_commit(
        lambda: queue.task_enqueue_background(task_name, ids), robust=True
    )


def documents_embed_missing(
    *, document_ids: Sequence[int], max_words: int = DEFAULT_MAX_WORDS
) -> int:
    """Embed those of these documents that have no embedding yet; returns how many."""
    has = UnitEmbedding.objects.filter(document=OuterRef("pk"), model=MODEL)
    docs = list(
        Document.objects.filter(pk__in=list(document_ids))
        .exclude(Exists(has))
        .only("pk", "text")
        .order_by("pk")
    )
    if docs:
        documents_embed(docs, max_words=max_words)
    return len(docs)


def document_semantic_evidence(
    *, document: Document, nuggets: Sequence[Nugget], model: str = MODEL
) -> list[dict[str, Any]] | None:
    """For each nugget, the window of ``document`` nearest to it and the similarity,
    nearest first (None without the extra). Only stored embeddings are read: those
    missing are asked for (:func:`embeddings_request`), never computed here."""
    if not embeddings.semantic_available():
        return None
    texts = {n.pk: n.text for n in nuggets}
    found, _ = stored_semantic(
        document=document, nugget_ids=texts, model=model, texts=texts
    )
    rows = [
        {
            "nugget": n,
            "similarity": found[n.pk]["similarity"],
            "span": (found[n.pk]["start"], found[n.pk]["end"]),
            "text": found[n.pk]["sentence"],
        }
        for n in nuggets
        if n.pk in found
    ]
    return sorted(rows, key=lambda r: (-r["similarity"], r["nugget"].pk))


def documents_nearest(
    *, document_ids: Sequence[int], nuggets: Sequence[Nugget], model: str = MODEL
) -> dict[int, dict[str, Any]]:
    """For each document with stored embeddings, its sentence (window) nearest to any
    of ``nuggets``: ``{"span", "similarity", "nugget"}`` (none without the extra;
    documents and nuggets not embedded yet are left out: a list page embeds nothing,
    see :func:`embeddings_request`)."""
    if not embeddings.semantic_available() or not nuggets:
        return {}
    texts = {n.pk: n.text for n in nuggets}
    vectors = nugget_vectors(texts, model=model, texts=texts)
    kept = [n for n in nuggets if n.pk in vectors]
    if not kept:
        return {}
    matrix = np.vstack([vectors[n.pk] for n in kept])
    out: dict[int, dict[str, Any]] = {}
    for doc_id, (spans, windows) in document_windows(document_ids, model=model).items():
        if not spans:
            continue
        sims = matrix @ windows.T
        row, col = np.unravel_index(int(sims.argmax()), sims.shape)
        out[doc_id] = {
            "span": spans[int(col)],
            "similarity": max(0.0, float(sims[row, col])),
            "nugget": kept[int(row)],
        }
    return out
