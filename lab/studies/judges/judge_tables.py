"""Measure judges' tables P(judge grade | people's grade) from the LLMJudge label sets.

Usage (from the repository root):
    python lab/studies/judges/judge_tables.py DATA OUT [JUDGE ...]

DATA holds ``human.qrels`` and ``judges/NAME.qrels`` (the LLMJudge layout of
``tests/data/llmjudge``); one ``OUT/NAME.json`` per judge (every judge without
names), read by ``simulate --judge-table``. The pool is every pair the people or the
judge graded; a pair one of them did not grade counts as its grade 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from lab.maths.judge_tables import judge_table, table_write


def qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            qid, _, docno, grade = line.split()[:4]
            out.setdefault(qid, {})[docno] = int(grade)
    return out


def main(data: Path, out: Path, names: list[str]) -> None:
    people = qrels(data / "human.qrels")
    out.mkdir(parents=True, exist_ok=True)
    files = sorted((data / "judges").glob("*.qrels"))
    for path in files:
        name = path.stem
        if names and name not in names:
            continue
        judge = qrels(path)
        pooled = {
            q: sorted(set(people.get(q, {})) | set(judge.get(q, {})))
            for q in set(people) | set(judge)
        }
        table = judge_table(people, judge, pooled)
        pairs = sum(len(d) for d in pooled.values())
        table_write(out / f"{name}.json", table, judge=name, pairs=pairs)
        rows = "; ".join(
            f"people {p}: " + " ".join(f"{j}:{s:.2f}" for j, s in r.items())
            for p, r in table.items()
        )
        print(f"{name} ({pairs} pairs): {rows}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
