"""CSV downloads and ``manage.py diagnose`` equal the pure functions on the same data.

Expected values are computed here from the shared Cranfield files and the rows the
test world wrote (not through the dashboard's own readers): standard measures with
ir_measures itself, rankings with scipy, the rest with ``nuggets_app.ir``.
"""

import csv
import io
import math
from pathlib import Path

import ir_measures
import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy import stats

from nuggets_app.ir.histograms import do_hsa
from nuggets_app.ir.lengthbias import length_bias_table, length_tests
from nuggets_app.ir.measures import scored_ranking_ap
from nuggets_app.ir.prels import PrelsRecord, prels_load
from nuggets_app.ir.ranking import ranking_compare
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.models import Document, Judgment, MatchResult, Nugget, SampleDocument

pytestmark = pytest.mark.django_db
RULE = "kind=threshold&threshold=0.5&n=100"


def _csv(client, world, page: str, table: str, query: str) -> list[dict[str, str]]:
    url = reverse("evaluation-page", args=[world.collection.pk, page])
    response = client.get(f"{url}csv/{table}?{query}")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def _same(got: str, want: float) -> bool:
    value = float(got)
    return (math.isnan(value) and math.isnan(want)) or value == pytest.approx(
        want, abs=1e-12
    )


def _human(world) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for j in Judgment.objects.filter(topic__collection=world.collection).select_related(
        "topic", "document"
    ):
        out.setdefault(j.topic.qid, {})[j.document.docno] = j.relevance
    return out


def test_run_means_equal_ir_measures_on_the_files(staff_client, world):
    query = f"qrels=qrels:{world.qrels.pk}&{RULE}&measures=AP+P@10+nDCG@10+Bpref"
    rows = _csv(staff_client, world, "runs", "evaluation", query)
    assert [r["run"] for r in rows] == sorted(world.file_runs)
    measures = [
        ir_measures.parse_measure(m) for m in ("AP", "P@10", "nDCG@10", "Bpref")
    ]
    for row in rows:
        want = ir_measures.calc_aggregate(
            measures, world.file_qrels, world.file_runs[row["run"]]
        )
        for m in measures:
            assert _same(row[str(m)], want[m]), (row["run"], m)


def test_statap_equals_the_estimator_on_the_sample_rows(staff_client, world):
    query = f"qrels=human&{RULE}&measures=AP&sample={world.sample.pk}"
    rows = {r["run"]: r for r in _csv(staff_client, world, "runs", "statap", query)}
    grades = {(j.topic_id, j.document_id): j.relevance for j in Judgment.objects.all()}
    sampled = SampleDocument.objects.filter(sample=world.sample).select_related(
        "topic", "document"
    )
    records = [
        PrelsRecord(i, s.topic.qid, s.document.docno,
                    grades[(s.topic_id, s.document_id)], 1, s.inclusion_prob)
        for i, s in enumerate(sorted(sampled, key=lambda s: (int(s.topic.qid), s.order)), 1)
    ]  # fmt: skip
    prels = prels_load(records)
    for name, scores in world.file_runs.items():
        summary = statap_evaluate(prels, scores).summary
        assert _same(rows[name]["statMAP"], summary.stat_map)
        assert _same(rows[name]["ci_low"], summary.ci95[0])
        assert _same(rows[name]["VAR_MAP"], summary.var_map)
        assert int(rows[name]["valid_topics"]) == summary.valid_topics


def test_comparison_equals_scipy_kendall_tau_and_ranking_compare(staff_client, world):
    query = f"qrels_a=qrels:{world.qrels.pk}&qrels_b=human&measure=AP&{RULE}"
    summary = _csv(staff_client, world, "compare", "comparison_summary", query)[0]
    moves = _csv(staff_client, world, "compare", "comparison", query)
    ap = ir_measures.parse_measure("AP")
    human = _human(world)
    # Both means are over the topics both qrels judge: the human ones here.
    common = {q: d for q, d in world.file_qrels.items() if q in human}
    assert summary["topics"] == str(len(common))
    a = {n: ir_measures.calc_aggregate([ap], common, r)[ap]
         for n, r in world.file_runs.items()}  # fmt: skip
    b = {n: ir_measures.calc_aggregate([ap], human, r)[ap]
         for n, r in world.file_runs.items()}  # fmt: skip
    names = sorted(a)
    tau = stats.kendalltau([a[n] for n in names], [b[n] for n in names]).statistic
    assert _same(summary["kendall_tau"], tau)
    want = ranking_compare(a, b)
    assert _same(summary["tau_ap"], want.tau_ap)
    assert [m["run"] for m in moves] == [m.run for m in want.moves]
    assert [int(m["delta"]) for m in moves] == [m.delta for m in want.moves]


def _held_out(world) -> tuple[dict, dict]:
    """Labels (judged, not a nugget source) and match scores, from the rows."""
    sources = {(n.topic.qid, n.document.docno) for n in Nugget.objects.all()}
    scores: dict[str, dict[str, float]] = {}
    for r in MatchResult.objects.filter(job=world.job).select_related(
        "topic", "document"
    ):
        scores.setdefault(r.topic.qid, {})[r.document.docno] = r.score
    labels: dict[str, dict[str, int]] = {}
    for qid, docs in _human(world).items():
        for docno, rel in docs.items():
            if (qid, docno) not in sources and docno in scores.get(qid, {}):
                labels.setdefault(qid, {})[docno] = int(rel >= 1)
    return labels, scores


def test_matcher_map_and_do_hsa_equal_the_pure_functions(staff_client, world):
    query = f"job={world.job.pk}&human=human&{RULE}&bins=10"
    labels, scores = _held_out(world)
    rows = {
        r["topic"]: r for r in _csv(staff_client, world, "trust", "matcher_map", query)
    }
    aps = {q: scored_ranking_ap(scores[q], lab) for q, lab in labels.items()}
    assert set(rows) == {*labels, "all"}
    for qid, ap in aps.items():
        assert _same(rows[qid]["AP"], ap)
        assert int(rows[qid]["judged"]) == len(labels[qid])
    defined = [v for v in aps.values() if not math.isnan(v)]
    assert _same(rows["all"]["AP"], sum(defined) / len(defined))
    hist_rows = {
        r["topic"]: r for r in _csv(staff_client, world, "trust", "do_hsa", query)
    }
    for qid, lab in labels.items():
        rel = [scores[qid][d] for d, v in lab.items() if v]
        non = [scores[qid][d] for d, v in lab.items() if not v]
        do, hsa, _ = do_hsa(rel, non, bins=10)
        assert _same(hist_rows[qid]["DO"], do)
        assert _same(hist_rows[qid]["HSA"], hsa)


def test_length_bias_equals_the_pure_functions(staff_client, world):
    query = f"job={world.job.pk}&human=human&{RULE}&length_bins=5"
    rows = _csv(staff_client, world, "trust", "length_bias", query)
    lengths = dict(
        Document.objects.filter(collection=world.collection).values_list(
            "docno", "length_words"
        )
    )
    human = {(q, d): r for q, docs in _human(world).items() for d, r in docs.items()}
    # Inferred qrels: the rule's decision on every document of the job, judged
    # ones included.
    inferred = {
        (r.topic.qid, r.document.docno): int(r.score >= 0.5)
        for r in MatchResult.objects.filter(job=world.job).select_related(
            "topic", "document"
        )
    }
    for label, judged in (("human", human), ("inferred", inferred)):
        want = length_bias_table(lengths, judged, bins=5)
        got = [r for r in rows if r["qrels"] == label]
        assert len(got) == 5
        for g, w in zip(got, want, strict=True):
            assert int(g["judged"]) == w.judged
            assert int(g["relevant"]) == w.relevant
            assert _same(g["p_rel_given_judged"], w.p_rel_given_judged)
    tests = _csv(staff_client, world, "trust", "length_tests", query)
    want_tests = length_tests(lengths, human, inferred)
    assert [(t["first"], t["second"]) for t in tests] == [
        (t.first, t.second) for t in want_tests
    ]
    for g, w in zip(tests, want_tests, strict=True):
        assert _same(g["p_value"], w.p_value)


def test_diagnose_writes_the_same_tables_and_the_plots(
    staff_client, world, tmp_path: Path
):
    out = io.StringIO()
    call_command(
        "diagnose", "--collection", world.collection.name, "--job", str(world.job.pk),
        "--out", str(tmp_path), stdout=out,
    )  # fmt: skip
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        "matcher_map.csv", "matcher_map.png", "do_hsa.csv", "histograms.csv",
        "histograms.png", "length_bias.csv", "length_bias.png", "length_tests.csv",
    }  # fmt: skip
    assert (tmp_path / "length_bias.png").read_bytes().startswith(b"\x89PNG")
    url = reverse("evaluation-page", args=[world.collection.pk, "trust"])
    query = f"job={world.job.pk}&human=human&{RULE}"
    for name in ("matcher_map", "do_hsa", "length_bias", "length_tests"):
        page = staff_client.get(f"{url}csv/{name}?{query}").content.decode()
        assert (tmp_path / f"{name}.csv").read_text() == page, name
    assert "matcher MAP" in out.getvalue()


def test_diagnose_refuses_an_unknown_job(world):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match=f"no job {world.job.pk + 5} in"):
        call_command(
            "diagnose", "--collection", world.collection.name,
            "--job", str(world.job.pk + 5),
        )  # fmt: skip
