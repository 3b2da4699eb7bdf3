"""The simulation report's estimator comparison on the real ADI collection: every
estimator's MAP, tau and tau_AP, the intervals and their coverage of the pooled truth,
the bias check and the default estimator; the cross-fitted p behind them."""

from __future__ import annotations

import json
import math

import pytest

from lab.services.simulation import SimulationConfig, simulation_run
from lab.services.simulation_report import report_build, report_write
from nuggets_app.ir.estimator import REPORTED
from nuggets_app.ir.intervals import INTERVALS
from nuggets_app.ir.measures import run_evaluate
from nuggets_app.models import Run

ESTIMATORS = {"sample_only", "statap", "eap", "model_assisted"}


@pytest.mark.django_db
def test_the_report_compares_estimators_with_intervals_coverage_and_bias_checks(
    adi, tmp_path
):
    collection, qrels = adi
    config = SimulationConfig(depth=30, sample_size=0, sample_fraction=0.2, seed=2)
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    report = report_build(data)

    # Cross-fitted p for every pooled document of every topic, none equal to the
    # full fit's everywhere (a model that did not see the topic's labels).
    assert data.crossfit is not None
    assert set(data.crossfit) == set(data.pool)
    for qid, docs in data.pool.items():
        assert set(data.crossfit[qid]) == set(docs)
        assert all(0.0 <= p <= 1.0 for p in data.crossfit[qid].values())
    assert data.crossfit != data.probabilities

    assert report["default_estimator"] == "model_assisted"
    estimators = report["estimators"]
    assert set(estimators) == ESTIMATORS
    runs = set(data.runs)
    full = report["systems"]["map"]["full"]
    for name in ("sample_only", "statap", "eap"):
        assert estimators[name]["tau"] == pytest.approx(report["tau"][name])
        assert estimators[name]["tau_ap"] == pytest.approx(report["tau_ap"][name])
        assert estimators[name]["map"] == pytest.approx(report["systems"]["map"][name])
    for name in ("sample_only", "eap"):
        assert estimators[name]["ci"] is None
        assert estimators[name]["coverage"] is None
    assert estimators["model_assisted"]["p"] == "crossfit"
    assert set(full) == runs

    # The true value: MAP under the full qrels restricted to the pooled documents,
    # over the topics with a relevant pooled document (trec_eval's AP via
    # ir_measures, an implementation independent of the report's).
    truth = {
        q: {d: int(data.truth.get(q, {}).get(d, 0) >= 1) for d in docs}
        for q, docs in data.pool.items()
    }
    truth = {q: labels for q, labels in truth.items() if any(labels.values())}
    pooled_truth = report["pooled_truth"]["map"]
    for run, scores in data.runs.items():
        answered = {q: s for q, s in scores.items() if q in truth}
        want = run_evaluate(truth, answered, measures=["AP"]).mean["AP"]
        assert pooled_truth[run] == pytest.approx(want, abs=1e-9)

    for name in ("statap", "model_assisted"):
        result = estimators[name]
        assert set(result["map"]) == set(result["ci"]) == runs
        for run, (low, high) in result["ci"].items():
            assert low <= result["map"][run] <= high
            assert 0 < result["n_topics"][run] <= len(data.pool)
        inside = [
            low <= pooled_truth[run] <= high
            for run, (low, high) in result["ci"].items()
        ]
        assert result["coverage_all_topics"] == pytest.approx(sum(inside) / len(inside))
        assert 0.0 <= result["coverage"] <= 1.0
        assert -1.0 <= result["tau"] <= 1.0
        assert -1.0 <= result["tau_ap"] <= 1.0
        # The errors beside the width: RMSE² = shift² + sd², and the width the errors
        # call for is 1.5 x 1.96 x RMSE; a run averaged over every topic with a
        # relevant pooled document has the pooled truth as its true value.
        assert result["rmse"] ** 2 == pytest.approx(
            result["shift"] ** 2 + result["error_sd"] ** 2
        )
        assert result["width_called_for"] == pytest.approx(1.5 * 1.96 * result["rmse"])
        whole = [r for r in runs if result["n_topics"][r] == len(truth)]
        if len(whole) == len(runs):
            assert result["shift"] == pytest.approx(
                sum(result["map"][r] - pooled_truth[r] for r in runs) / len(runs)
            )
    # Every interval method on the same estimates; the reported one is the top level.
    assisted = estimators["model_assisted"]
    assert set(assisted["intervals"]) == set(INTERVALS)
    reported = assisted["intervals"][REPORTED.interval]
    assert reported["coverage"] == assisted["coverage"]
    assert reported["half_width"] == pytest.approx(
        sum((high - low) / 2 for low, high in assisted["ci"].values()) / len(runs)
    )
    linear = assisted["intervals"]["linearised"]
    assert reported["half_width"] >= linear["half_width"]
    assert assisted["model_only_topics"] == sorted(
        q
        for q, labels in data.human.items()
        if not any(g >= 1 for g in labels.values())
    )
    # The design's π for every pooled document, drawn or not.
    assert data.design is not None
    for qid, docs in data.pool.items():
        assert set(data.design[qid]) == set(docs)
        assert all(0.0 < pi <= 1.0 for pi in data.design[qid].values())
        for docno, pi in data.sample[qid].items():
            assert data.design[qid][docno] == pi
    # Model-assisted per-topic values are bounded, so its MAP lies in [0, 1].
    assert all(0.0 <= v <= 1.0 for v in estimators["model_assisted"]["map"].values())

    checks = report["bias_check"]
    assert set(checks) == runs
    for check in checks.values():
        low, high = check["ci"]
        assert check["diff"] == pytest.approx(
            check["eap"] - check["shift"] * check["statap"]
        )
        assert check["raw_diff"] == pytest.approx(check["eap"] - check["statap"])
        assert low <= check["diff"] <= high
        assert check["flagged"] == (low > 0 or high < 0)
        assert isinstance(check["flagged"], bool)

    # Every new key survives the JSON file (NaN written as null).
    report_write(report, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "report.json").read_text())
    assert set(written["estimators"]) == ESTIMATORS
    assert written["default_estimator"] == "model_assisted"
    assert written["bias_check"].keys() == checks.keys()
    for key in ("tau", "tau_ap", "map_unjudged", "systems", "systems_graded"):
        assert key in written
    assert not math.isnan(written["estimators"]["model_assisted"]["tau"])
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## MAP estimators: errors beside interval widths" in markdown
    row = next(
        line for line in markdown.splitlines() if line.startswith("| model_assisted |")
    )
    assert f"{estimators['model_assisted']['width_called_for']:.4f}" in row
