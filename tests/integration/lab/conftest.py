"""The simulation tests' world: ADI with its generated runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from nuggets_app.models import Collection
from tests.integration.worlds.made_runs import collection_with_made_runs


@pytest.fixture
def adi(shared_data: Path, tmp_path: Path) -> tuple[Collection, Path]:
    """ADI imported, with the runs `make_runs` generates to depth 100; and its qrels."""
    base = shared_data / "adi"
    collection = collection_with_made_runs(
        "adi", base / "docs.jsonl.gz", base / "topics.jsonl", tmp_path / "runs"
    )
    return collection, base / "qrels.txt"
