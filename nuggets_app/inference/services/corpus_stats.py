"""A job's BM25 corpus statistics, computed in parts that every worker shares.

The statistics (document count, mean length, document frequencies) are over every
distinct document of the job's chunks, with the model's terms (:func:`document_terms`).
The first caller splits the job's sorted document ids into a few contiguous parts
(``JobStatsPart``: at most ``PARTS_MAX``, none below ``PART_DOCUMENTS_MIN`` documents
unless the job is smaller). Each worker then claims a free part, computes its sums and
marks it done, in one transaction that holds the part's row lock: a worker that dies
drops its connection, so the lock goes and the part, still not done, is claimed by the
next one. A worker with no free part waits on the parts others hold. When every part is
done, one worker merges them under the ``JobInference`` row lock, stores the result in
``JobInference.stats`` and deletes the parts.

The merge adds integers (counts, lengths, document frequencies), so the result is
exactly ``CorpusStats.from_tokens`` over the same documents. On SQLite (no row locks,
one process) the same loop computes every part in turn.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import transaction

from matcher import MatchOptions, normalize
from nuggets_app.learning import relevance_features
from nuggets_app.models import (
    Document,
    JobInference,
    JobStatsPart,
    MatchChunk,
    MatchJob,
)

PARTS_MAX = 8
# Smaller parts would cost more in claims and merging than they save.
PART_DOCUMENTS_MIN = 5000
TEXT_BATCH = 2000

_STATS: dict[int, relevance_features.CorpusStats] = {}


def stats_cache_clear() -> None:
    """Forget the per-process statistics."""
    _STATS.clear()


def job_options(job: MatchJob) -> MatchOptions:
    """The matcher options of the job (its terms are the model's terms too)."""
    return MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)


def title_terms(title: str, text: str, options: MatchOptions) -> list[str]:
    """The terms a document's title adds to its text's (none when the text starts
    with it): documents are indexed with their titles, as the retrieval baselines."""
    if not title or text.startswith(title):
        return []
    return normalize(title, options)


def document_terms(title: str, text: str, options: MatchOptions) -> list[str]:
    """The model's terms of a document: its title's, then its text's."""
    return title_terms(title, text, options) + normalize(text, options)


def stats_to_json(stats: relevance_features.CorpusStats) -> dict[str, Any]:
    """The statistics as ``JobInference.stats`` keeps them."""
    return {"n_docs": stats.n_docs, "avg_len": stats.avg_len, "df": dict(stats.df)}


def stats_from_json(data: dict[str, Any]) -> relevance_features.CorpusStats:
    """The statistics of :func:`stats_to_json`."""
    return relevance_features.CorpusStats(
        int(data["n_docs"]), float(data["avg_len"]), dict(data["df"])
    )


def job_stats_ensure(*, job: MatchJob) -> relevance_features.CorpusStats:
    """The job's corpus statistics: read when stored, else computed with the other
    workers (every part this worker can claim, then a wait for the others' parts)
    and stored by whichever worker finds every part done."""
    stats = _STATS.get(job.pk)
    if stats is None:
        stats = stats_parts_plan(job=job)
        if stats is None:
            while _part_compute_next(job):
                continue
            stats = _parts_merge(job)
        if len(_STATS) > 16:
            _STATS.clear()
        _STATS[job.pk] = stats
    return stats


def parts_slices(doc_ids: Sequence[int]) -> list[Sequence[int]]:
    """``doc_ids`` (sorted) cut into contiguous parts of nearly equal size: at most
    ``PARTS_MAX``, each of at least ``PART_DOCUMENTS_MIN`` (one for a small job)."""
    count = max(1, min(PARTS_MAX, len(doc_ids) // max(1, PART_DOCUMENTS_MIN)))
    n = len(doc_ids)
    return [doc_ids[i * n // count : (i + 1) * n // count] for i in range(count)]


def stats_parts_plan(*, job: MatchJob) -> relevance_features.CorpusStats | None:
    """The stored statistics, or None once the job's parts exist (created here by the
    first caller, under the job's row lock so the others wait a moment, not a pass)."""
    JobInference.objects.get_or_create(job=job)
    with transaction.atomic():
        info = JobInference.objects.select_for_update().get(job=job)
        if info.stats is not None:
            return stats_from_json(info.stats)
        if not JobStatsPart.objects.filter(job=job).exists():
            parts = [
                JobStatsPart(job=job, index=index, document_ids=list(ids))
                for index, ids in enumerate(parts_slices(_job_document_ids(job)))
            ]
            JobStatsPart.objects.bulk_create(parts, ignore_conflicts=True)
    return None


def _job_document_ids(job: MatchJob) -> list[int]:
    """Every distinct document id of the job's chunks, sorted."""
    ids: set[int] = set()
    for doc_ids in MatchChunk.objects.filter(job=job).values_list(
        "document_ids", flat=True
    ):
        ids.update(doc_ids)
    return sorted(ids)


def _part_compute_next(job: MatchJob) -> bool:
    """Claim a part not done and compute it; False once every part is done.

    A free part (skip_locked) first; with none free, wait on the first part another
    worker holds: when its holder commits it is done and the loop moves on; when its
    holder died, it is still not done and this worker computes it under the lock it
    now holds."""
    pending = JobStatsPart.objects.filter(job=job, done=False).order_by("index")
    with transaction.atomic():
        part = pending.select_for_update(skip_locked=True).first()
        if part is None:
            held = pending.values_list("pk", flat=True).first()
            if held is None:
                return False
            part = pending.select_for_update().filter(pk=held).first()
            if part is None:
                return True
        _part_compute(part, job_options(job))
    return True


def _part_compute(part: JobStatsPart, options: MatchOptions) -> None:
    """Store the part's sums (``CorpusStats.from_tokens`` before the division)."""
    documents, total, df = relevance_features.corpus_sums(
        _documents_terms(part.document_ids, options)
    )
    part.documents, part.total_length, part.df = documents, total, dict(df)
    part.done = True
    part.save(update_fields=["documents", "total_length", "df", "done"])


def _documents_terms(
    doc_ids: Sequence[int], options: MatchOptions
) -> Iterator[list[str]]:
    """The terms of these documents (a vanished one is skipped), a batch at a time."""
    for start in range(0, len(doc_ids), TEXT_BATCH):
        batch = doc_ids[start : start + TEXT_BATCH]
        rows = Document.objects.filter(pk__in=batch).values_list("title", "text")
        for title, text in rows.iterator(chunk_size=500):
            yield document_terms(title, text, options)


def _parts_merge(job: MatchJob) -> relevance_features.CorpusStats:
    """Sum the done parts into the job's statistics, store them and drop the parts
    (or read the statistics another worker merged first)."""
    with transaction.atomic():
        info = JobInference.objects.select_for_update().get(job=job)
        if info.stats is not None:
            return stats_from_json(info.stats)
        df: Counter[str] = Counter()
        documents = total = 0
        parts = JobStatsPart.objects.filter(job=job).values_list(
            "documents", "total_length", "df"
        )
        for part_documents, part_total, part_df in parts:
            documents += part_documents
            total += part_total
            df.update(part_df)
        stats = relevance_features.CorpusStats(
            documents, total / documents if documents else 0.0, dict(df)
        )
        info.stats = stats_to_json(stats)
        info.feature_names = list(relevance_features.FEATURE_NAMES)
        info.save(update_fields=["stats", "feature_names"])
        JobStatsPart.objects.filter(job=job).delete()
    return stats
