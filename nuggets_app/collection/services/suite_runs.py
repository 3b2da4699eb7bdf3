"""Runs for pooling experiments, and the run and qrels data a simulation reads.

:func:`runs_make` ranks a collection with the run suite of
:mod:`nuggets_app.learning.run_suite` and writes TREC run files (``manage.py make_runs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from nuggets_app.importers.qrels import parse_qrels
from nuggets_app.learning.run_suite import run_suite, run_write
from nuggets_app.models import Collection, Document, Run, RunEntry, Topic

Labels = dict[str, dict[str, int]]
Scores = dict[str, dict[str, float]]


def document_texts(collection: Collection) -> list[tuple[str, str]]:
    """``(docno, title + text)`` of every document: what the retrieval models index."""
    rows = Document.objects.filter(collection=collection).order_by("docno")
    return [
        (docno, f"{title}\n{text}" if title and not text.startswith(title) else text)
        for docno, title, text in rows.values_list("docno", "title", "text").iterator()
    ]


def topic_queries(topics: Iterable[Topic]) -> list[tuple[str, str]]:
    """``(qid, query text)``: the title, or the description when there is no title."""
    return [(t.qid, t.title or t.description) for t in topics]


def runs_make(
    *,
    docs: list[tuple[str, str]],
    topics: list[tuple[str, str]],
    out_dir: Path,
    depth: int = 1000,
    seed: int = 0,
    feedback: Mapping[str, list[str]] | None = None,
    tags: Iterable[str] | None = None,
) -> dict[str, Path]:
    """Rank ``docs`` for ``topics`` with the run suite; one ``<tag>.run`` per run."""
    out_dir.mkdir(parents=True, exist_ok=True)
    suite = run_suite(
        docs, topics, depth=depth, seed=seed, feedback=feedback, tags=tags
    )
    paths = {}
    for tag, rankings in suite.items():
        paths[tag] = out_dir / f"{tag}.run"
        run_write(str(paths[tag]), tag, rankings)
    return paths


def qrels_read(path: str | Path) -> Labels:
    """``qid -> {docno: rel}`` from a TREC qrels file (errors name file and line)."""
    labels: Labels = {}
    for record in parse_qrels(path, "qrels"):
        labels.setdefault(record.qid, {})[record.docno] = record.rel
    return labels


def runs_scores(runs: Iterable[Run]) -> dict[str, Scores]:
    """``run name -> qid -> {docno: score}`` of the runs' stored entries."""
    result: dict[str, Scores] = {}
    for run in runs:
        per_topic: Scores = {}
        rows = RunEntry.objects.filter(run=run).values_list(
            "topic__qid", "document__docno", "score"
        )
        for qid, docno, score in rows.iterator(chunk_size=20000):
            per_topic.setdefault(qid, {})[docno] = score
        result[run.name] = per_topic
    return result
