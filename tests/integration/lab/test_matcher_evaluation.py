"""evaluate_matcher's reading and report on the TREC TS pseudo-documents of TS14.25:
gold pairs as the files give them, measures consistent with each other, misses and
false matches shown with the people's and the matcher's spans."""

import gzip
import json

import pytest
from django.core.management import call_command

from lab.maths.matcher_eval import semantic_scores
from lab.services.matcher_evaluation import (
    evaluation_load,
    evaluation_run,
)
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import text_windows


@pytest.fixture
def ts_files(shared_data):
    base = shared_data / "trec-ts-nuggets"
    return base / "nuggets.jsonl", base / "docs.jsonl.gz", base / "doc_matches.jsonl.gz"


def test_gold_pairs_and_measures_on_ts_documents(ts_files, tmp_path):
    nuggets, docs, matches = ts_files
    data = evaluation_load(
        nuggets_path=nuggets,
        units_path=docs,
        gold_path=matches,
        unit_field="docno",
        qid_prefix="TS14.25",
    )
    known = {
        json.loads(line)["nugget_id"]
        for line in nuggets.open()
        if json.loads(line)["qid"] == "TS14.25"
    }
    with gzip.open(docs, "rt") as rows:
        units = {
            d["docno"]: d["text"]
            for d in map(json.loads, rows)
            if "TS14.25" in d["qids"]
        }
    with gzip.open(matches, "rt") as rows:
        expected = {
            ("TS14.25", m["docno"], m["nugget_id"])
            for m in map(json.loads, rows)
            if m["qid"] == "TS14.25" and m["nugget_id"] in known and m["docno"] in units
        }
    assert data.gold == expected
    assert {u.id for u in data.units} == set(units)

    report = evaluation_run(data, ks=(3,), lams=(0.5,), examples=5)
    assert report["gold"] == len(expected)
    for result in report["scorings"].values():
        pair = result["pair"]
        assert 0 <= pair["average_precision"] <= 1
        assert all(pair["best_f1"] >= p["f1"] - 1e-12 for p in pair["points"])
        assert sum(g["gold"] for g in result["per_grade"].values()) == len(expected)
    failures = report["failures"]
    assert failures["scoring"] == "minspan k=3 lam=0.5"
    by_length = failures["recall_by_nugget_terms"].values()
    assert sum(gold for gold, _, _ in by_length) == len(expected)
    assert sum(hit for _, hit, _ in by_length) == len(expected) - failures["misses"]
    for row in failures["miss_examples"]:
        text = units[row["unit"]]
        assert all(span in text for span in row["human_span"])
        assert all(span in text for span in row["matched"])
    for row in failures["false_match_examples"]:
        assert ("TS14.25", row["unit"], row["nugget"]) not in expected
        assert row["matched"]


def test_the_command_writes_json_markdown_and_plot(ts_files, tmp_path):
    nuggets, docs, matches = ts_files
    out = tmp_path / "report"
    call_command(
        "evaluate_matcher",
        "--nuggets",
        str(nuggets),
        "--units",
        str(docs),
        "--gold",
        str(matches),
        "--level",
        "document",
        "--qid-prefix",
        "TS14.25",
        "--no-bm25",
        "--no-semantic",
        "--out",
        str(out),
    )
    report = json.loads((out / "report.json").read_text())
    assert list(report["scorings"]) == ["minspan k=3 lam=0.5"]
    assert "| minspan k=3 lam=0.5 | pair |" in (out / "report.md").read_text()
    assert (out / "pr.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.skipif(not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE)
def test_with_the_extra_the_semantic_and_combined_scorings_are_reported_by_default(
    ts_files, tmp_path, capsys
):
    nuggets, docs, matches = ts_files
    out = tmp_path / "report"
    call_command(
        "evaluate_matcher", "--nuggets", str(nuggets), "--units", str(docs),
        "--gold", str(matches), "--level", "document", "--qid-prefix", "TS14.25",
        "--k", "2", "3", "--weights", "0.5", "--out", str(out),
    )  # fmt: skip
    assert "semantic evidence: on (all-MiniLM-L6-v2)" in capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    names = list(report["scorings"])
    semantic = "semantic all-MiniLM-L6-v2"
    assert semantic in names
    combined = [n for n in names if n.startswith("combined 0.5 x (minspan k=")]
    assert len(combined) == 1
    assert not any(
        n.startswith(("minspan", "nugget-bm25")) for n in (semantic, *combined)
    )
    # The semantic score of a pair is the best cosine of the nugget to a sentence.
    data = evaluation_load(
        nuggets_path=nuggets, units_path=docs, gold_path=matches,
        unit_field="docno", qid_prefix="TS14.25",
    )  # fmt: skip
    unit = data.units[0]
    nugget = data.nuggets[0]
    encoder = embeddings.load_encoder()
    sentences = [unit.text[s:e] for s, e in text_windows(unit.text)]
    expected = float((encoder.embed(sentences) @ encoder.embed([nugget.text])[0]).max())
    again = evaluation_run(
        data, ks=(3,), lams=(0.5,), bm25=False, embed=encoder.embed, weights=()
    )
    pair = again["scorings"][semantic]["pair"]
    assert pair["scored"] > 0
    recalls = again["recall_at_best_f1"][semantic]
    assert sum(n for n, _, _ in recalls["recall_by_span_overlap"].values()) == len(
        data.gold
    )
    scores = semantic_scores(data.units, data.nuggets, encoder.embed)
    assert scores.get((unit.qid, unit.id, nugget.id), 0.0) == pytest.approx(
        max(expected, 0.0), abs=1e-5
    )
    table = (out / "report.md").read_text()
    assert f"| {semantic} | pair |" in table
    assert "Recall of the gold pairs at each scoring's best-F1 threshold" in table


def test_the_embedding_cache_file_embeds_each_text_once_across_runs(tmp_path):
    import numpy as np

    from lab.services.matcher_evaluation import file_cached_embed

    calls: list[list[str]] = []

    def embed(texts):
        calls.append(list(texts))
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    path = tmp_path / "cache.npz"
    first = file_cached_embed(embed, path)(["a", "bb", "a"])
    assert calls == [["a", "bb"]]
    again = file_cached_embed(embed, path)(["bb", "ccc"])
    assert calls == [["a", "bb"], ["ccc"]]
    np.testing.assert_array_equal(first[1], again[0])
    np.testing.assert_array_equal(again[1], [3.0, 1.0])
    # A cache written with the texts themselves (an earlier format) is read too.
    legacy = tmp_path / "legacy.npz"
    np.savez(legacy, texts=np.array(["x"]), vectors=np.array([[9.0, 9.0]], np.float32))
    assert file_cached_embed(embed, legacy)(["x"]).tolist() == [[9.0, 9.0]]
    assert calls[-1] == ["ccc"]
