"""Generated answers of two systems for two TREC RAG 2025 topics (58 and 213), whose
nuggets come from the public nugget file imported as a bank: system ``four`` states
the first four nuggets of each topic, sentence by sentence, ``two`` the first two.
At threshold 1 (every shingle of the nugget in its smallest window) an answer contains
exactly the nuggets it states and their verbatim repeats in the file (topic 213 lists
"North Korea invaded South Korea on June 25, 1950." twice, once in lower case), so each
system's recall is known from the file alone, weighted by vital 1, okay 0.5."""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.management import call_command

from nuggets_app.models import Collection

QIDS = ("58", "213")
SYSTEMS = {"four": 4, "two": 2}


def rag_nuggets(base: Path) -> dict[str, list[dict]]:
    path = base / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["qid"] in QIDS:
            out[row["qid"]] = row["nuggets"]
    return out


def answers_world(base: Path, tmp_path: Path) -> tuple[Collection, Path, dict]:
    """The collection ``rag`` with the bank, the answers file and the nuggets."""
    nuggets = rag_nuggets(base)
    bank = tmp_path / "bank.jsonl"
    bank.write_text(
        "".join(
            json.dumps({"qid": qid, "nuggets": nuggets[qid]}) + "\n" for qid in QIDS
        )
    )
    call_command(
        "import_nuggets", str(bank), "--collection", "rag", "--create-topics",
        "--name", "rag25", stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    answers = tmp_path / "answers.jsonl"
    rows = []
    for system, count in SYSTEMS.items():
        for qid in QIDS:
            text = " ".join(f"{n['text'].rstrip('.')}." for n in nuggets[qid][:count])
            rows.append({"run_id": system, "qid": qid, "text": text})
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Collection.objects.get(name="rag"), answers, nuggets


def stated(nuggets: dict, qid: str, count: int) -> list[dict]:
    """The topic's nuggets an answer stating the first ``count`` ones states."""
    said = {n["text"].rstrip(".").lower() for n in nuggets[qid][:count]}
    return [n for n in nuggets[qid] if n["text"].rstrip(".").lower() in said]


def expected_recall(nuggets: dict, count: int) -> tuple[float, float]:
    """Means over the two topics of recall and weighted recall with ``count`` stated."""
    recall, weighted = [], []
    for qid in QIDS:
        weight = {"vital": 1.0, "okay": 0.5}
        found = stated(nuggets, qid, count)
        recall.append(len(found) / len(nuggets[qid]))
        weighted.append(
            sum(weight[n["importance"]] for n in found)
            / sum(weight[n["importance"]] for n in nuggets[qid])
        )
    return sum(recall) / 2, sum(weighted) / 2
