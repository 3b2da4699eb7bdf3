"""The simulation tests' world: ADI with its generated runs."""

from __future__ import annotations

from pathlib import Path

import pytest

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


@pytest.fixture
def adi(shared_data: Path, tmp_path: Path) -> tuple[Collection, Path]:
    """ADI imported, with the runs `make_runs` generates to depth 100; and its qrels."""
    base = shared_data / "adi"
    collection_import(path=base / "docs.jsonl.gz", name="adi")
    topics_import(path=base / "topics.jsonl", collection="adi")
    collection = Collection.objects.get(name="adi")
    paths = runs_make(
        docs=document_texts(collection),
        topics=topic_queries(collection.topics.all()),
        out_dir=tmp_path / "runs",
        depth=100,
    )
    runs_import(paths=list(paths.values()), collection=collection)
    return collection, base / "qrels.txt"
