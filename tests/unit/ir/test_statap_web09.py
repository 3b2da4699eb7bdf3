"""statAP on the real TREC 2009 Web prels (Million Query style) with generated runs.

NIST's script is not shipped. The checks are invariants that hold by construction
(with every π = 1 statAP is AP, statRprec is R-precision and statP@30 is P@30, as
trec_eval computes them through ir_measures) and, when ``STATAP_REFERENCE`` names a
copy of ``statAP_MQ_eval_v3.pl`` and perl is installed, the script's own output.
"""

import gzip
import math
import os
import random
import re
import shutil
import subprocess

import ir_measures
import pytest

from nuggets_app.importers.qrels import parse_qrels
from nuggets_app.ir.prels import PrelsRecord, prels_load
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.ir.statap_nist import nist_report

PRELS = "trec-web09-prels/prels.web.1-50.txt.gz"


@pytest.fixture(scope="module")
def records():
    from tests.conftest import SHARED_DATA

    path = SHARED_DATA / PRELS
    return list(parse_qrels(path, "prels"))


def generated_run(records, seed: int) -> dict[str, dict[str, float]]:
    """Each topic's judged documents plus 25 unjudged ones, in a seeded random order."""
    rng = random.Random(seed)
    docs: dict[str, list[str]] = {}
    for rec in records:
        docs.setdefault(rec.qid, []).append(rec.docno)
    run = {}
    for qid, docnos in docs.items():
        ranked = docnos + [f"unjudged-{qid}-{i}" for i in range(25)]
        rng.shuffle(ranked)
        run[qid] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return run


def test_the_real_prels_load_with_the_counts_of_its_readme(records):
    prels = prels_load(records)
    assert len(records) == 13118
    assert len(prels) == 50
    assert sum(t.n_sampled for t in prels.values()) == 13118
    assert sum(t.n_rel for t in prels.values()) == 4002
    assert sum(t.n_high for t in prels.values()) == 1488
    assert sum(t.umass for t in prels.values()) == 2452


def test_estimated_r_is_the_sum_of_inverse_probabilities(records):
    prels = prels_load(records)
    result = statap_evaluate(prels, generated_run(records, 1))
    expected: dict[str, float] = {}
    for rec in records:
        if rec.rel > 0:
            prob = 1.0 if rec.method == 0 else rec.inclusion_prob
            expected[rec.qid] = expected.get(rec.qid, 0.0) + 1 / prob
    for topic in result.topics:
        assert topic.est_r == pytest.approx(expected.get(topic.qid, 0.0), rel=1e-12)
        if not topic.valid:
            continue
        # Every judged document is in the generated run.
        assert topic.sampled_in_list == topic.n_sampled
        assert topic.sampled_rel_in_list == topic.n_sampled_rel
        low, high = topic.ci95
        assert low <= topic.statap <= high
    # Topic 20 has no relevant document, so it is not a valid topic.
    assert [t.qid for t in result.topics if not t.valid] == ["20"]
    assert result.summary.valid_topics == 49


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_with_certain_judgments_statap_is_trec_evals_ap(records, seed):
    certain = [
        PrelsRecord(r.line, r.qid, r.docno, r.rel, 2, r.inclusion_prob) for r in records
    ]
    run = generated_run(records, seed)
    result = statap_evaluate(prels_load(certain), run)
    qrels = {}
    for rec in records:
        qrels.setdefault(rec.qid, {})[rec.docno] = rec.rel
    measures = [ir_measures.AP, ir_measures.Rprec, ir_measures.P @ 30]
    reference = {
        (str(m.measure), m.query_id): m.value
        for m in ir_measures.iter_calc(measures, qrels, run)
    }
    for topic in result.topics:
        assert topic.label == "MIXED"
        if not topic.valid:
            continue
        assert topic.statap == pytest.approx(reference["AP", topic.qid], abs=1e-9)
        assert topic.rprec == pytest.approx(reference["Rprec", topic.qid], abs=1e-9)
        assert topic.p30 == pytest.approx(reference["P@30", topic.qid], abs=1e-9)


NUMBER = re.compile(r"-?\d+(\.\d+)?(e[-+]\d+)?")


def _same_text_up_to_rounding(ours: str, theirs: str) -> None:
    """Equal text; numbers may differ in the last printed digit (summation order)."""
    a, b = ours.split(), theirs.split()
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        key_x, _, val_x = x.rpartition("=")
        key_y, _, val_y = y.rpartition("=")
        assert key_x == key_y
        if NUMBER.fullmatch(val_x) and NUMBER.fullmatch(val_y):
            assert float(val_x) == pytest.approx(float(val_y), rel=1e-12, abs=2e-6)
        else:
            assert val_x == val_y


@pytest.mark.parametrize("flags", [["-q"], ["-q", "-f"]])
def test_output_equals_nists_script_when_it_is_available(records, tmp_path, flags):
    script = os.environ.get("STATAP_REFERENCE")
    if not script or not shutil.which("perl"):
        pytest.skip("set STATAP_REFERENCE to statAP_MQ_eval_v3.pl to compare with it")
    from tests.conftest import SHARED_DATA

    prels_file = tmp_path / "web09.prels"
    with gzip.open(SHARED_DATA / PRELS, "rt") as handle:
        prels_file.write_text(handle.read())
    run = generated_run(records, 7)
    run_file = tmp_path / "gen.run"
    run_file.write_text(
        "".join(
            f"{qid} Q0 {d} {i} {s} gen\n"
            for qid, docs in run.items()
            for i, (d, s) in enumerate(docs.items(), 1)
        )
    )
    theirs = subprocess.run(
        ["perl", script, *flags, str(prels_file), str(run_file)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    prels = prels_load(records, sampled_only="-f" in flags)
    ours = nist_report([statap_evaluate(prels, run)], per_topic=True).stdout
    _same_text_up_to_rounding(ours, theirs)
    assert not math.isnan(statap_evaluate(prels, run).summary.stat_map)
