"""A world of imported nugget banks whose nuggets have no source document: TREC TS,
TREC QA and TREC RAG, each imported by ``manage.py import_nuggets`` from the public
files in ``tests/data/public``.

One collection holds documents of three families of topics:

- TS14.25 (TREC TS 2014): the pooled-sentence pseudo-documents of
  ``trec-ts-nuggets/docs.jsonl.gz``, graded by its ``qrels.txt``; its topic statement
  from ``topics.jsonl``;
- TREC QA 2003 definition questions 1901, 1905 and 1907, and TREC RAG 2025 topics 58
  and 213: their documents are not public (AQUAINT, MS MARCO segments), so each gets
  answer passages stating two of its nuggets each (the nuggets' texts from the
  answer keys), as a QA or RAG system's answer states them: what nugget evaluation
  of answers reads.

An assessor judged, per topic, its first document relevant and one document of each
other family non-relevant, and highlighted one nugget in a TS14.25 document: a job
over a bank must not use it.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

from django.core.management import call_command

from nuggets_app.collection.services.imports import collection_import, topics_import
from nuggets_app.models import (
    Collection,
    Document,
    Judgment,
    Nugget,
    NuggetBank,
    Topic,
)
from tests.helpers import read_qrels

NAME = "banks"
TS_TOPICS = ("TS14.25",)
QA_TOPICS = ("1901", "1905", "1907")
RAG_TOPICS = ("58", "213")
PER_ANSWER = 2
ANSWERS = 4


@dataclass
class BankWorld:
    collection: Collection
    # bank name -> (its file, its format, its topics)
    banks: dict[str, tuple[Path, str, tuple[str, ...]]]
    # qid -> docnos of the topic's own documents
    own: dict[str, list[str]] = field(default_factory=dict)
    # qid -> {docno: grade} judged by the assessor
    judged: dict[str, dict[str, int]] = field(default_factory=dict)
    assessor_nugget: Nugget | None = None

    def bank_pk(self, name: str) -> int:
        return NuggetBank.objects.get(collection=self.collection, name=name).pk


def _qa_nuggets(path: Path, qids: tuple[str, ...]) -> dict[str, list[str]]:
    """Nugget texts per question of a TREC QA answer key (``X N<TAB>label<TAB>text``)."""
    out: dict[str, list[str]] = {q: [] for q in qids}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[0].split()[0] in out:
            out[fields[0].split()[0]].append(fields[2].strip())
    return out


def _rag_nuggets(path: Path, qids: tuple[str, ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["qid"] in qids:
            out[row["qid"]] = [n["text"] for n in row["nuggets"]]
    return out


def _answers(family: str, nuggets: dict[str, list[str]]) -> dict[str, list[dict]]:
    """Answer passages per topic: consecutive nuggets, ``PER_ANSWER`` at a time."""
    out: dict[str, list[dict]] = {}
    for qid, texts in nuggets.items():
        docs = []
        for i in range(0, min(len(texts), PER_ANSWER * ANSWERS), PER_ANSWER):
            text = ". ".join(t.rstrip(".") for t in texts[i : i + PER_ANSWER]) + "."
            docs.append(
                {"docno": f"{family}-{qid}-{i // PER_ANSWER + 1}", "text": text}
            )
        out[qid] = docs
    return out


def _import_bank(path: Path, name: str, fmt: str, create_topics: bool) -> None:
    args = [str(path), "--collection", NAME, "--name", name, "--format", fmt]
    call_command(
        "import_nuggets", *args, *(["--create-topics"] if create_topics else []),
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip


def bank_world(shared_data: Path, tmp_path: Path, assessor) -> BankWorld:
    """Load the collection, the three banks, the judgments and the assessor's nugget."""
    ts_dir = shared_data / "trec-ts-nuggets"
    qa_key = shared_data / "trec-qa-nuggets" / "original" / "trec12answers_definition"
    rag_key = shared_data / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    ts_key = ts_dir / "original" / "2014" / "nuggets.tsv.gz"

    with gzip.open(ts_dir / "docs.jsonl.gz", "rt", encoding="utf-8") as rows:
        ts_docs = [json.loads(line) for line in rows]
    answers = {
        **_answers("qa", _qa_nuggets(qa_key, QA_TOPICS)),
        **_answers("rag", _rag_nuggets(rag_key, RAG_TOPICS)),
    }
    docs_path = tmp_path / "banks-docs.jsonl"
    with docs_path.open("w", encoding="utf-8") as out:
        for row in ts_docs:
            out.write(
                json.dumps({k: row[k] for k in ("docno", "title", "text")}) + "\n"
            )
        for docs in answers.values():
            for row in docs:
                out.write(json.dumps({**row, "title": ""}) + "\n")
    collection_import(path=docs_path, name=NAME)
    topics_import(path=ts_dir / "topics.jsonl", collection=NAME)
    world = BankWorld(
        collection=Collection.objects.get(name=NAME),
        banks={
            "ts": (ts_key, "trec-ts", TS_TOPICS),
            "qa": (qa_key, "trec-qa", QA_TOPICS),
            "rag": (rag_key, "rag", RAG_TOPICS),
        },
    )
    for name, (path, fmt, _) in world.banks.items():
        _import_bank(path, name, fmt, create_topics=name != "ts")

    qrels = read_qrels(ts_dir / "qrels.txt")
    world.own = {
        "TS14.25": sorted(qrels["TS14.25"]),
        **{qid: [d["docno"] for d in docs] for qid, docs in answers.items()},
    }
    families = {
        "ts": list(TS_TOPICS), "qa": list(QA_TOPICS), "rag": list(RAG_TOPICS),
    }  # fmt: skip
    docs = {d.docno: d for d in Document.objects.filter(collection=world.collection)}
    for family, qids in families.items():
        others = [q for f, qs in families.items() if f != family for q in qs[:1]]
        for qid in qids:
            topic = Topic.objects.get(collection=world.collection, qid=qid)
            grade = qrels.get(qid, {}).get(world.own[qid][0], 1)
            judged = {world.own[qid][0]: grade}
            judged.update({world.own[other][-1]: 0 for other in others})
            world.judged[qid] = judged
            for docno, relevance in judged.items():
                Judgment.objects.create(
                    topic=topic, document=docs[docno], assessor=assessor,
                    relevance=relevance,
                )  # fmt: skip

    # What an assessor highlighted in a TS14.25 document: not part of any bank.
    source = docs[world.own["TS14.25"][1]]
    end = source.text.find(" ", 40)
    world.assessor_nugget = Nugget.objects.create(
        topic=Topic.objects.get(collection=world.collection, qid="TS14.25"),
        assessor=assessor, document=source, start=0, end=end,
        span_text=source.text[:end], text=source.text[:end], grade=1,
    )  # fmt: skip
    return world
