"""``manage.py evaluate``: ir_measures' own values, statAP with --prels, database mode."""

import io
from pathlib import Path

import ir_measures
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.integration.evaluation.stored import store

DATA = Path(__file__).resolve().parents[2] / "data" / "ir"
MEASURES = ["AP", "P@10", "nDCG@10", "nDCG", "Rprec", "Bpref", "infAP", "Judged@10"]


def evaluate(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def parse(text: str) -> dict[str, dict[tuple[str, str], str]]:
    blocks: dict[str, dict[tuple[str, str], str]] = {}
    current = blocks.setdefault("", {})
    for line in text.splitlines():
        first, second, *rest = line.split("\t")
        if first == "run" and not rest:
            current = blocks.setdefault(second, {})
        else:
            current[first, second] = rest[0]
    return blocks


@pytest.fixture
def trec_eval_files(shared_data):
    folder = shared_data / "trec_eval-tests"
    return folder / "qrels.test", folder / "results.test"


def test_values_equal_ir_measures_own_on_trec_evals_test_files(trec_eval_files):
    qrels_path, run_path = trec_eval_files
    values = parse(evaluate("--qrels", str(qrels_path), str(run_path)))[""]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    measures = [ir_measures.parse_measure(m) for m in MEASURES]
    expected = {
        (str(m.measure), m.query_id): m.value
        for m in ir_measures.iter_calc(measures, qrels, run)
    }
    expected.update(
        {
            (str(m), "all"): v
            for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()
        }
    )
    assert len(expected) == 8 * 4
    assert {key: float(value) for key, value in values.items()} == expected


def test_several_runs_get_a_block_each(trec_eval_files, tmp_path):
    qrels_path, run_path = trec_eval_files
    other = tmp_path / "other.run"
    other.write_text(run_path.read_text().replace("STANDARD", "OTHER"))
    blocks = parse(
        evaluate("--qrels", str(qrels_path), str(run_path), str(other), "--summary")
    )
    assert sorted(blocks) == ["", "OTHER", "STANDARD"]
    assert blocks["OTHER"] == blocks["STANDARD"]
    assert set(blocks["OTHER"]) == {(m, "all") for m in MEASURES}


def test_chosen_measures_only(trec_eval_files):
    qrels_path, run_path = trec_eval_files
    values = parse(
        evaluate("--qrels", str(qrels_path), str(run_path), "--measures", "P@5")
    )[""]
    assert values["P@5", "302"] == "0.8"
    assert set(m for m, _ in values) == {"P@5"}


def test_prels_give_statap_and_its_interval():
    values = parse(
        evaluate("--prels", str(DATA / "tiny.prels"), str(DATA / "tiny.run"))
    )[""]
    assert float(values["statAP", "all"]) == pytest.approx(0.764666666666667, abs=1e-12)
    assert float(values["statAP", "2"]) == pytest.approx(1.083333333333333, abs=1e-12)
    assert "statAP_ci_low" in {m for m, _ in values}


def test_unknown_measure_and_bad_lines_are_reported(trec_eval_files, tmp_path):
    qrels_path, run_path = trec_eval_files
    with pytest.raises(
        CommandError,
        match='unknown measure "XYZ": a measure is an ir_measures name: AP, P@10',
    ):
        evaluate("--qrels", str(qrels_path), str(run_path), "--measures", "XYZ")
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n1 0 d2 one\n")
    with pytest.raises(CommandError, match=r"bad\.qrels:2: "):
        evaluate("--qrels", str(bad), str(run_path))
    with pytest.raises(CommandError, match="exactly one of --qrels"):
        evaluate(str(run_path))


@pytest.mark.django_db
def test_database_mode_equals_file_mode(trec_eval_files):
    qrels_path, run_path = trec_eval_files
    store("trec-eval", qrels={"test": qrels_path}, runs={"STANDARD": run_path})
    from_db = evaluate(
        "--collection", "trec-eval", "--qrels-name", "test", "--run", "STANDARD"
    )
    assert from_db == evaluate("--qrels", str(qrels_path), str(run_path))


@pytest.mark.django_db
def test_database_mode_with_stored_prels_gives_statap():
    store(
        "tiny",
        qrels={"tiny-prels": DATA / "tiny.prels"},
        runs={"tiny": DATA / "tiny.run"},
    )
    from_db = evaluate("--collection", "tiny", "--qrels-name", "tiny-prels")
    assert from_db == evaluate(
        "--prels", str(DATA / "tiny.prels"), str(DATA / "tiny.run")
    )
    with pytest.raises(CommandError, match="no run nope"):
        evaluate("--collection", "tiny", "--qrels-name", "tiny-prels", "--run", "nope")
