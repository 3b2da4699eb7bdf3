"""The benchmark command runs end to end and cross-checks the two implementations."""

import gzip
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def _first_cranfield_docs(shared_data, tmp_path, count: int):
    """The first ``count`` Cranfield documents as a JSONL file."""
    docs = tmp_path / "docs.jsonl"
    with gzip.open(
        shared_data / "cranfield" / "docs.jsonl.gz", "rt", encoding="utf-8"
    ) as handle:
        docs.write_text(
            "".join(line for _, line in zip(range(count), handle, strict=False))
        )
    return docs


def test_bench_reports_throughput_ratio_and_agreement_with_the_baseline(
    shared_data, tmp_path
):
    docs = _first_cranfield_docs(shared_data, tmp_path, 60)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "matcher",
            "bench",
            "--docs",
            str(docs),
            "--topics",
            "1",
            "--nuggets-per-topic",
            "20",
            "--baseline-docs",
            "10",
            "--rounds",
            "1",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "60 docs" in out
    assert "ratio matcher / bare tokenization:" in out
    assert "scores agree: yes" in out
    assert "re-score stored evidence" in out


def test_bench_refuses_nonsense_counts():
    result = subprocess.run(
        [sys.executable, "-m", "matcher", "bench", "--topics", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1


def test_cold_bench_times_fresh_score_processes_and_checks_their_outputs_agree(
    shared_data, tmp_path
):
    docs = _first_cranfield_docs(shared_data, tmp_path, 80)
    result = subprocess.run(
        [sys.executable, "-m", "matcher", "bench", "--cold", "--docs", str(docs),
         "--nuggets-per-topic", "20", "--rounds", "1"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "80 docs" in out
    assert "1 topics x 20 nuggets" in out
    for mode in ("no stem table", "empty stem table", "stem table filled"):
        assert f"score, {mode}" in out
    assert "ratio to bare tokenization" in out
    assert "end to end, wall clock" in out
    assert "output identical in the three modes: yes" in out
