"""Store qrels/prels and runs read from real files in the database, for DB-mode tests."""

from __future__ import annotations

import gzip
from pathlib import Path

from nuggets_app.models import (
    Collection,
    Document,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Topic,
)


def _lines(path: Path) -> list[list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        return [line.split() for line in handle if line.strip()]


def store(
    collection: str, *, qrels: dict[str, Path], runs: dict[str, Path]
) -> Collection:
    """A collection holding every topic and docno of the files, the qrels and the runs.

    A qrels file with 5 columns is stored as prels.
    """
    files = {name: _lines(p) for name, p in {**qrels, **runs}.items()}
    col = Collection.objects.create(name=collection)
    qids, docnos = set(), set()
    for name, rows in files.items():
        for row in rows:
            qids.add(row[0])
            docnos.add(row[1] if name in qrels and len(row) == 5 else row[2])
    topics = {
        t.qid: t
        for t in Topic.objects.bulk_create(
            Topic(collection=col, qid=q) for q in sorted(qids)
        )
    }
    docs = {
        d.docno: d
        for d in Document.objects.bulk_create(
            Document(collection=col, docno=d) for d in sorted(docnos)
        )
    }
    for name in qrels:
        rows = files[name]
        prels = len(rows[0]) == 5
        stored = Qrels.objects.create(
            collection=col, name=name, kind="prels" if prels else "qrels"
        )
        QrelsEntry.objects.bulk_create(
            QrelsEntry(
                qrels=stored,
                topic=topics[r[0]],
                document=docs[r[1] if prels else r[2]],
                relevance=int(r[2] if prels else r[3]),
                method=int(r[3]) if prels else None,
                inclusion_prob=(None if r[4] == "NA" else float(r[4]))
                if prels
                else None,
            )
            for r in rows
        )
    for name in runs:
        run = Run.objects.create(collection=col, name=name)
        RunEntry.objects.bulk_create(
            RunEntry(
                run=run,
                topic=topics[r[0]],
                document=docs[r[2]],
                rank=int(r[3]),
                score=float(r[4]),
            )
            for r in files[name]
        )
    return col
