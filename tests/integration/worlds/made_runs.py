"""A collection imported from files with the runs ``make_runs`` generates for it, as
the simulation studies build theirs."""

from __future__ import annotations

from pathlib import Path

from nuggets_app.collection.services.imports import (
    collection_import,
    runs_import,
    topics_import,
)
from nuggets_app.collection.services.suite_runs import (
    document_texts,
    runs_make,
    topic_queries,
)
from nuggets_app.models import Collection


def collection_with_made_runs(
    name: str, docs: Path, topics: Path, runs_dir: Path
) -> Collection:
    """The collection ``name`` from ``docs`` and ``topics``, with its generated runs
    (depth 100, written to ``runs_dir``) imported."""
    collection_import(path=docs, name=name)
    topics_import(path=topics, collection=name)
    collection = Collection.objects.get(name=name)
    paths = runs_make(
        docs=document_texts(collection),
        topics=topic_queries(collection.topics.all()),
        out_dir=runs_dir,
        depth=100,
    )
    runs_import(paths=list(paths.values()), collection=collection)
    return collection
