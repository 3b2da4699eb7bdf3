"""One path: what ``simulate`` reports is what a user of the same job and sample gets.

On the real ADI collection, a simulation's ``report.json`` (the default estimator's
MAP and interval, EAP, the bias check's statMAP, per run; the inferred documents) is
compared with what ``evaluate --job N --sample S`` prints (its statMAP also with the
report's statAP of NIST's script) and what ``export_qrels
--job N`` writes on the same database, to the last printed digit; and a second
simulation is refused rather than silently changing the first job's judgments.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.models import MatchJob, Run

pytestmark = pytest.mark.django_db


def _evaluate(job: int, sample: str, runs: list[str]) -> dict[str, dict[str, str]]:
    out = io.StringIO()
    call_command(
        "evaluate", "--job", str(job), "--sample", sample, "--collection", "adi",
        "--run", *runs, stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    blocks: dict[str, dict[str, str]] = {}
    current = runs[0]
    for line in out.getvalue().splitlines():
        fields = line.split("\t")
        if fields[0] == "run":
            current = fields[1]
            continue
        measure, topic, value = fields
        if topic == "all":
            blocks.setdefault(current, {})[measure] = value
    return blocks


def test_simulation_report_equals_evaluate_and_export(adi, tmp_path):
    _, qrels = adi
    out = tmp_path / "sim"
    call_command(
        "simulate", "--collection", "adi", "--qrels", str(qrels), "--depth", "20",
        "--sample-size", "8", "--seed", "3", "--out", str(out),
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    job, sample = report["job"]["id"], report["job"]["sample"]
    assert MatchJob.objects.get(pk=job).relevance_level == 1
    runs = sorted(Run.objects.values_list("name", flat=True))
    printed = _evaluate(job, sample, runs)
    estimator = report["estimators"]["model_assisted"]
    for run in runs:
        got = printed[run]
        assert float(got["maAP"]) == estimator["map"][run]
        assert [float(got["maAP_ci_low"]), float(got["maAP_ci_high"])] == (
            estimator["ci"][run]
        )
        assert float(got["EAP"]) == report["systems"]["map"]["eap"][run]
        assert float(got["statMAP"]) == report["bias_check"][run]["statap"]
        # One statMAP: the bias check's is statAP's own (NIST's script, its topics).
        assert float(got["statMAP"]) == pytest.approx(
            report["estimators"]["statap"]["map"][run], abs=1e-12
        )
        assert float(got["bias_diff"]) == report["bias_check"][run]["diff"]
    # A run evaluated alone gets the figures and the verdict it gets beside the rest.
    alone = _evaluate(job, sample, [runs[0]])[runs[0]]
    assert alone == printed[runs[0]]

    # The inferred qrels of the report are the export's inferred lines (p >= 0.5,
    # the job's default rule, unjudged documents only).
    path = tmp_path / "inferred.qrels"
    call_command(
        "export_qrels", "--collection", "adi", "--kind", "inferred", "--job",
        str(job), "--output", str(path), stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    sidecar = json.loads(path.with_name(path.name + ".provenance.json").read_text())
    # A judged document's line is the person's grade, not an inference.
    exported = {
        (line["qid"], line["docno"])
        for line in sidecar["lines"]
        if line["rel"] != 0 and line["source"] != "person"
    }
    assert sidecar["rule_text"] == "p >= 0.5"
    assert sidecar["relevance"] == "relevant at grade >= 1"
    assert sidecar["job"]["fit_sample"] == sample
    assert report["inference"]["inferred_relevant"] == len(exported)

    # A second simulation would replace the judgments the first job was fitted on.
    with pytest.raises(CommandError, match=f"job {job}"):
        call_command(
            "simulate", "--collection", "adi", "--qrels", str(qrels), "--depth",
            "20", "--sample-size", "8", "--seed", "4",
            stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip
    assert _evaluate(job, sample, [runs[0]])[runs[0]] == printed[runs[0]]
