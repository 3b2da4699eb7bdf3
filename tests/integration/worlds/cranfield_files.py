"""The small Cranfield files of the test data (documents, topics, qrels and the top 20
of its runs), loaded by the services the commands and upload tasks use."""

from __future__ import annotations

import gzip
from pathlib import Path

from nuggets_app.collection.services import imports
from nuggets_app.models import Collection
from tests.conftest import TEST_DATA

CRANFIELD = TEST_DATA / "public" / "cranfield"
RUNS = sorted((CRANFIELD / "runs-top20").glob("*.run.gz"))


def load_cranfield(collection: Collection, *, runs: bool = False) -> Collection:
    """Cranfield's documents and topics in ``collection``, and with ``runs`` its runs."""
    imports.collection_import(path=CRANFIELD / "docs.trec.gz", name=collection.name)
    imports.topics_import(path=CRANFIELD / "topics.trec", collection=collection)
    if runs:
        imports.runs_import(paths=RUNS, collection=collection)
    return collection


def broken_run(tmp_path: Path) -> Path:
    """A real run with three bad lines: a text score on line 3, 5 columns on line 5,
    and an unknown docno on line 7."""
    lines = gzip.decompress(RUNS[0].read_bytes()).decode().splitlines()
    cols = lines[2].split()
    lines[2] = " ".join([*cols[:4], "high", *cols[5:]])
    lines[4] = " ".join(lines[4].split()[:5])
    cols = lines[6].split()
    lines[6] = " ".join([*cols[:2], "no-such-doc", *cols[3:]])
    path = tmp_path / "broken.run"
    path.write_text("\n".join(lines) + "\n")
    return path
