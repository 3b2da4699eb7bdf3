"""A judge's measured table P(judge grade | people's grade), and judges drawn from it.

Pure. :func:`judge_table` measures the table on a collection where both graded the
same pooled documents (a pooled document the people did not grade counts as their
grade 0); :func:`judge_draw` draws, for every pooled document of a simulated
collection, a judge grade from the row of its people's grade, with the seed. A drawn
judge errs independently of the text (two documents of the same people's grade are
equally likely to be misgraded), which a real judge does not: its errors follow what
the text says, and so do the relevance model's other features.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

Table = dict[int, dict[int, float]]


def judge_table(
    people: Mapping[str, Mapping[str, int]],
    judge: Mapping[str, Mapping[str, int]],
    pooled: Mapping[str, Sequence[str]],
) -> Table:
    """``{people's grade: {judge's grade: share}}`` over the pooled documents (a
    document either did not grade counts as grade 0)."""
    counts: dict[int, dict[int, int]] = {}
    for qid, docnos in pooled.items():
        for docno in docnos:
            row = counts.setdefault(int(people.get(qid, {}).get(docno, 0)), {})
            grade = int(judge.get(qid, {}).get(docno, 0))
            row[grade] = row.get(grade, 0) + 1
    return {
        p: {j: n / sum(row.values()) for j, n in sorted(row.items())}
        for p, row in sorted(counts.items())
    }


def table_read(path: str | Path) -> Table:
    """A table written by :func:`table_write` (JSON: ``{"table": {p: {j: share}}}``)."""
    data = json.loads(Path(path).read_text())
    return {
        int(p): {int(j): float(s) for j, s in row.items()}
        for p, row in data["table"].items()
    }


def table_write(path: str | Path, table: Table, **about: object) -> None:
    """Write ``table`` with what it was measured on (``about``)."""
    rows = {
        str(p): {str(j): round(s, 6) for j, s in r.items()} for p, r in table.items()
    }
    Path(path).write_text(json.dumps({**about, "table": rows}, indent=1) + "\n")


def judge_draw(
    table: Table,
    pooled: Mapping[str, Sequence[str]],
    truth: Mapping[str, Mapping[str, int]],
    *,
    seed: int,
    name: str = "",
) -> dict[tuple[str, str], int]:
    """A judge grade for every pooled document, drawn from the table's row of its
    people's grade (the nearest lower row for a grade the table lacks; grade 0 when
    none), in qid then docno order with ``random.Random(f"{seed}:{name}")``."""
    rng = random.Random(f"{seed}:{name}")
    rows = sorted(table)
    out: dict[tuple[str, str], int] = {}
    for qid in sorted(pooled):
        for docno in sorted(pooled[qid]):
            grade = int(truth.get(qid, {}).get(docno, 0))
            lower = [p for p in rows if p <= grade] or rows[:1]
            row = table.get(lower[-1]) if lower else None
            if not row:
                out[(qid, docno)] = 0
                continue
            grades, shares = zip(*sorted(row.items()), strict=True)
            out[(qid, docno)] = rng.choices(grades, weights=shares)[0]
    return out
