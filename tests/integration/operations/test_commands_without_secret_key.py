"""``statap`` and ``evaluate --qrels`` read files and print numbers, like trec_eval: they
run in a shell with neither SECRET_KEY nor DEBUG set (nor a database or a broker), and
print the reference implementations' numbers."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data"
TREC_EVAL = DATA / "public" / "trec_eval-tests"
CRANFIELD = DATA / "public" / "cranfield"
# Our measure name -> trec_eval's, as trec_eval -a prints it (out.test.aq).
TREC_EVAL_NAMES = {"AP": "map", "P@10": "P_10", "nDCG": "ndcg", "Rprec": "Rprec"}


def manage(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """``python manage.py ARGS`` with a fresh shell's variables only."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "DATA_DIR": str(tmp_path / "data"),
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def values(text: str) -> dict[tuple[str, str], str]:
    """``measure<TAB>topic<TAB>value`` lines (``run`` lines skipped)."""
    out = {}
    for line in text.splitlines():
        measure, topic, *value = line.split("\t")
        if measure != "run":
            out[measure, topic] = value[0]
    return out


def test_statap_prints_the_nist_scripts_text_without_a_key(tmp_path):
    prels, run = DATA / "ir" / "tiny.prels", DATA / "ir" / "tiny.run"
    result = manage(
        tmp_path, "statap", "--nist-output", "--per-topic", str(prels), str(run)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (DATA / "ir" / "tiny.q.expected").read_text()
    tab = manage(tmp_path, "statap", str(prels), str(run))
    assert tab.returncode == 0, tab.stderr
    assert float(values(tab.stdout)["statAP", "all"]) == pytest.approx(
        0.764666666666667, abs=1e-12
    )
    # Nothing was made up for the missing key, nor a database opened.
    assert not (tmp_path / "data" / "secret_key").exists()
    assert not (tmp_path / "data" / "db.sqlite3").exists()


def test_evaluate_prints_trec_evals_numbers_without_a_key(tmp_path):
    result = manage(
        tmp_path, "evaluate", "--qrels", str(TREC_EVAL / "qrels.test"),
        str(TREC_EVAL / "results.test"), "--measures", *TREC_EVAL_NAMES,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    got = values(result.stdout)
    expected = {}
    for line in (TREC_EVAL / "out.test.aq").read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        expected[name, qid] = value
    for ours, theirs in TREC_EVAL_NAMES.items():
        for qid in ("301", "302", "303", "all"):
            assert f"{float(got[ours, qid]):.4f}" == expected[theirs, qid]
    assert not (tmp_path / "data" / "db.sqlite3").exists()


def test_evaluate_scores_a_cranfield_run_as_ir_measures_without_a_key(tmp_path):
    run = sorted((CRANFIELD / "runs").glob("*.gz"))[0]
    plain = tmp_path / "run.txt"
    plain.write_bytes(gzip.decompress(run.read_bytes()))
    qrels = CRANFIELD / "qrels.txt"
    result = manage(
        tmp_path, "evaluate", "--qrels", str(qrels), str(plain), "--summary",
        "--measures", "AP", "nDCG@10",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@10")]
    expected = ir_measures.calc_aggregate(
        measures,
        list(ir_measures.read_trec_qrels(str(qrels))),
        list(ir_measures.read_trec_run(str(plain))),
    )
    got = values(result.stdout)
    assert {m: float(got[m, "all"]) for m in ("AP", "nDCG@10")} == {
        str(m): v for m, v in expected.items()
    }
