"""simulate --nuggets human on the TREC TS cut: the simulated assessor takes the TS
assessors' own nuggets (a nugget bank made from their matches) from the judged
relevant documents instead of cutting nuggets with the sentence heuristic."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from lab.services.simulation import (
    SimulationConfig,
    SimulationError,
    simulation_run,
)
from lab.services.simulation_config import SIMULATED_ASSESSOR
from lab.services.simulation_report import report_build
from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.models import Collection, Nugget, Run
from tests.integration.worlds.made_runs import collection_with_made_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def ts(shared_data: Path, tmp_path: Path) -> tuple[Collection, Path, Path]:
    """The cut's documents, its topics with qrels, generated runs, and the assessors'
    placed matches as a bank file (the project's JSONL)."""
    base = shared_data / "trec-ts-nuggets"
    docs = tmp_path / "docs.jsonl"
    qrels = tmp_path / "qrels.txt"
    with gzip.open(base / "doc_matches.jsonl.gz", "rt") as rows:
        matches = [json.loads(row) for row in rows]
    # The documents of the first 25 placed matches of one topic (the whole cut).
    wanted: list[str] = []
    for m in matches:
        placed = m["qid"] == "TS14.25" and m["start"] is not None
        if placed and m["docno"] not in wanted and len(wanted) < 25:
            wanted.append(m["docno"])
    with gzip.open(base / "docs.jsonl.gz", "rt") as rows, docs.open("w") as out:
        out.writelines(line for line in rows if json.loads(line)["docno"] in wanted)
    lines = (base / "qrels.txt").read_text().splitlines()
    qrels.write_text(
        "".join(
            f"{line}\n"
            for line in lines
            if line.split()[2] in wanted and line.split()[0] == "TS14.25"
        )
    )
    qids = {line.split()[0] for line in qrels.read_text().splitlines()}
    topics = tmp_path / "topics.jsonl"
    with (base / "topics.jsonl").open() as rows, topics.open("w") as out:
        out.writelines(line for line in rows if json.loads(line)["qid"] in qids)
    collection = collection_with_made_runs("ts", docs, topics, tmp_path / "runs")
    texts = {
        (n["qid"], n["nugget_id"]): n["text"]
        for n in map(json.loads, (base / "nuggets.jsonl").open())
    }
    bank = tmp_path / "bank.jsonl"
    with bank.open("w") as out:
        for m in matches:
            text = texts.get((m["qid"], m["nugget_id"]))
            placed = m["start"] is not None and m["docno"] in wanted
            if text and placed and m["qid"] in qids:
                record = {
                    "qid": m["qid"],
                    "id": m["nugget_id"],
                    "text": text,
                    "grade": m["importance"],
                    "docno": m["docno"],
                    "start": m["start"],
                    "end": m["end"],
                }
                out.write(json.dumps(record) + "\n")
    return collection, qrels, bank


def test_human_nuggets_come_from_judged_relevant_documents_once_each(ts):
    collection, qrels, bank_file = ts
    bank = nugget_bank_import(path=bank_file, collection=collection).bank
    config = SimulationConfig(
        depth=100, sample_size=12, seed=3, nuggets="human", inference="paper"
    )
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    relevant = {(q, d) for q, docs in data.human.items() for d, g in docs.items() if g}
    expected = {
        (n.topic.qid, n.source_id)
        for n in bank.nuggets.select_related("topic", "document")
        if (n.topic.qid, n.document.docno) in relevant
    }
    made = Nugget.objects.filter(assessor__username=SIMULATED_ASSESSOR).select_related(
        "topic", "document"
    )
    assert expected, "the sample judged no document with a human match relevant"
    assert {(n.topic.qid, n.source_id) for n in made} == expected
    assert made.count() == len(expected) == sum(data.nuggets.values())
    for nugget in made:
        assert (nugget.topic.qid, nugget.document.docno) in relevant
        source = bank.nuggets.filter(
            topic=nugget.topic,
            source_id=nugget.source_id,
            document=nugget.document,
            start=nugget.start,
            end=nugget.end,
        ).first()
        assert source is not None
        assert (nugget.text, nugget.grade) == (source.text, source.grade)
        assert nugget.span_text == nugget.document.text[nugget.start : nugget.end]
    assert report_build(data)["config"]["nuggets"] == "human"


def test_human_nuggets_need_a_bank_with_source_spans(ts):
    collection, qrels, _ = ts
    config = SimulationConfig(depth=100, sample_size=5, nuggets="human")
    with pytest.raises(SimulationError, match="needs exactly one nugget bank"):
        simulation_run(
            collection=collection,
            qrels_path=qrels,
            runs=Run.objects.all(),
            config=config,
        )
