"""The judge-audit study on a real LLMJudge excerpt: its report's keys, and truths that
match a count of every pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.studies.judge_audit import FIGURES, main

DATA = Path(__file__).resolve().parents[2] / "data" / "llmjudge"
JUDGES = ("RMITIR-llama70B", "TREMA-rubric0", "h2oloo-fewself")


def _labels(path: Path) -> dict[tuple[str, str], int]:
    out = {}
    for line in path.read_text().splitlines():
        qid, _, docno, grade = line.split()
        out[(qid, docno)] = int(grade)
    return out


def _count(human: dict, judge: dict) -> dict[str, float]:
    both = sum(g >= 2 and judge[k] >= 2 for k, g in human.items())
    people = sum(g >= 2 for g in human.values())
    judged = sum(g >= 2 for g in judge.values())
    n = len(human)
    po = sum((g >= 2) == (judge[k] >= 2) for k, g in human.items()) / n
    pe = (people * judged + (n - people) * (n - judged)) / (n * n)
    return {
        "kappa": (po - pe) / (1 - pe),
        "precision": both / judged,
        "recall": both / people,
        "count_ratio": judged / people,
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("judges") / "report.json"
    argv = ["--human", str(DATA / "human.qrels"), "--judges", str(DATA / "judges")]
    argv += ["--fraction", "0.2", "--seeds", "2", "--json", str(out)]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_the_report_holds_every_judge_with_its_figures(report: dict) -> None:
    assert report["seeds"] == 2
    assert report["pairs"] == 420
    assert report["topics"] == 4
    assert sorted(report["judges"]) == list(JUDGES)
    for figures in report["judges"].values():
        assert set(figures) >= {
            "truth",
            "coverage",
            "r_rmse_with",
            "r_rmse_without",
            "r_rmse_ratio",
            "r_coverage_with",
            "r_coverage_without",
            "width_ratio",
            "worth_judgments",
        }
        assert set(figures["truth"]) == set(FIGURES)
        assert set(figures["coverage"]) == set(FIGURES)
        assert all(v in (0.0, 0.5, 1.0) for v in figures["coverage"].values())
        ratio = figures["r_rmse_with"] / figures["r_rmse_without"]
        assert figures["r_rmse_ratio"] == pytest.approx(ratio)


def test_the_truths_are_the_counts_over_every_pair(report: dict) -> None:
    human = _labels(DATA / "human.qrels")
    for name in JUDGES:
        judge = _labels(DATA / "judges" / f"{name}.qrels")
        expected = _count(human, judge)
        for figure, value in report["judges"][name]["truth"].items():
            assert value == pytest.approx(expected[figure]), (name, figure)
