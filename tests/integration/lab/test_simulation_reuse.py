"""Reusability on the real ADI collection: each group of runs held out of the pool and
evaluated as new, by every estimator, against the full qrels."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from lab.services.simulation import SimulationConfig, SimulationError
from lab.services.simulation_reuse import (
    ESTIMATORS,
    held_out_groups,
    reusability_run,
)
from nuggets_app.collection.services.suite_runs import qrels_read, runs_scores
from nuggets_app.ir.prels import ranking_order
from nuggets_app.ir.reusability import ranks
from nuggets_app.models import Run

pytestmark = pytest.mark.django_db
SUMMARY = {"mean_abs_rank_error", "max_rank_drop", "mean_rel_error", "tau", "runs"}


def _groups_file(tmp_path, names):
    """Two groups: the first half of the runs by name, and the rest."""
    half = len(names) // 2
    lines = [f"{n} {'first' if i < half else 'second'}" for i, n in enumerate(names)]
    path = tmp_path / "groups.txt"
    path.write_text("# run group\n" + "\n".join(lines) + "\n")
    return path


def test_leave_one_group_out_evaluates_every_run_once_as_new(adi, tmp_path):
    _collection, qrels = adi
    names = sorted(Run.objects.values_list("name", flat=True))
    out = tmp_path / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command(
        "simulate", "--collection", "adi", "--qrels", str(qrels), "--depth", "20",
        "--sample-size", "20%", "--seed", "2",
        "--reusability", "leave-one-group-out",
        "--groups", str(_groups_file(tmp_path, names)), "--out", str(out),
        "--top-up", "5", stdout=stdout, stderr=stderr,
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    assert report["default_estimator"] == "model_assisted"
    assert set(report["reusability"]) == set(ESTIMATORS)
    assert set(json.loads(stdout.getvalue())) == set(ESTIMATORS)
    assert sorted(report["groups"]) == ["first", "second"]
    rows = report["runs"]
    assert sorted(r["run"] for r in rows) == names
    full = report["full"]["map"]
    full_rank = ranks(full)
    for estimator in ESTIMATORS:
        summary = report["reusability"][estimator]
        assert set(summary) == SUMMARY
        errors = [r[estimator]["rank_error"] for r in rows]
        assert summary["mean_abs_rank_error"] == pytest.approx(
            sum(abs(e) for e in errors) / len(errors)
        )
        assert summary["max_rank_drop"] == max(0, *errors)
        for row in rows:
            assert row["full"]["rank"] == full_rank[row["run"]]
            assert (
                row[estimator]["rank"] - full_rank[row["run"]]
                == (row[estimator]["rank_error"])
            )
    # The held-out runs brought documents the pool of the others lacked.
    assert sum(r["unpooled_documents"] for r in rows) > 0
    for group, found in report["unpooled"].items():
        assert 0 <= found["expected_relevant"] <= found["documents"], group
        assert 0 <= found["true_relevant"] <= found["judged"] <= found["documents"]
        assert found["expected_relevant_judged"] <= found["expected_relevant"] + 1e-9
    assert sum(g["documents"] for g in report["unpooled"].values()) > 0
    # Each held-out run's figure with its interval, before and after a top-up of at
    # most 5 documents per topic judged from the qrels.
    for row in rows:
        low, high = row["model_assisted"]["ci"]
        assert low <= row["model_assisted"]["map"] <= high
        assert row["model_assisted"]["var_model"] >= 0
        if row["unpooled_documents"]:
            top = row["top_up"]
            assert 0 < top["documents"] <= 5 * top["topics"]
            low, high = top["model_assisted"]["ci"]
            assert low <= top["model_assisted"]["map"] <= high
    for found in report["unpooled"].values():
        assert 0 <= found["calibrated_relevant"] <= found["documents"]
        assert (
            found["calibrated_relevant_judged"] <= found["calibrated_relevant"] + 1e-9
        )
        assert found["ratio"] > 0
    assert report["pooled_rel_error"]
    assert len(report["pooled_rel_error_pool"]) == len(report["pooled_rel_error"])
    _the_three_truths_hold(report, qrels, depth=20)


def _the_three_truths_hold(report, qrels, *, depth):
    """The pool's truth counts the relevant documents some run retrieved down to the
    depth, as a count by hand says; each run carries its own figures of it."""
    labels = qrels_read(str(qrels))
    scores = runs_scores(Run.objects.all())
    topics = set(report["full"]["topics"])
    pooled = {
        (q, d)
        for run in scores.values()
        for q, docs in run.items()
        if q in topics
        for d in ranking_order(docs)[:depth]
    }
    relevant = {(q, d) for q in topics for d, g in labels[q].items() if g >= 1}
    assert report["full"]["relevant"] == {
        "full": len(relevant),
        "in_pool": len(relevant & pooled),
    }
    assert len(relevant & pooled) < len(relevant)  # ADI's runs miss some at depth 20
    for row in report["runs"]:
        truths = row["full"]
        assert truths["pool_map"] == report["full"]["pool_map"][row["run"]]
        assert 0 <= truths["map"] <= 1
        assert 0 <= truths["reachable_map"] <= 1


def test_groups_default_to_the_shared_prefix_and_a_groups_file_must_list_every_run():
    names = ["TUW19-p1-f", "TUW19-p2-re", "runid2", "runid5"]
    assert held_out_groups(names, "leave-one-group-out") == {
        "TUW": ["TUW19-p1-f", "TUW19-p2-re"],
        "runid": ["runid2", "runid5"],
    }
    assert held_out_groups(names, "leave-one-run-out")["runid2"] == ["runid2"]
    with pytest.raises(SimulationError, match="no group for run runid5"):
        held_out_groups(names, "leave-one-group-out", {n: "a" for n in names[:3]})
    with pytest.raises(SimulationError, match="at least two groups"):
        held_out_groups(["a1", "a2"], "leave-one-group-out")


def test_a_bad_groups_file_names_its_line(adi, tmp_path):
    _collection, qrels = adi
    path = tmp_path / "groups.txt"
    path.write_text("run-a team\nlonely\n")
    with pytest.raises(CommandError, match=r"groups\.txt:2"):
        call_command(
            "simulate", "--collection", "adi", "--qrels", str(qrels),
            "--reusability", "leave-one-group-out", "--groups", str(path),
        )  # fmt: skip


def test_leave_one_run_out_holds_out_each_run(adi):
    collection, qrels = adi
    runs = list(Run.objects.order_by("name")[:3])
    report = reusability_run(
        collection=collection,
        qrels_path=str(qrels),
        runs=runs,
        config=SimulationConfig(depth=10, sample_size=0, sample_fraction=0.2, seed=1),
        mode="leave-one-run-out",
    )
    assert report["groups"] == {r.name: [r.name] for r in runs}
    assert [row["run"] for row in report["runs"]] == [r.name for r in runs]
