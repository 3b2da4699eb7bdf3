"""statAP against the test vector of NIST's statAP_MQ_eval_v3.pl (docs/reference/algorithms.md 2.10)."""

import math
from pathlib import Path

import pytest

from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.qrels import parse_qrels, parse_qrels_text
from nuggets_app.ir.prels import (
    PrelsRecord,
    StatapInputError,
    prels_load,
    ranking_order,
    run_scores,
)
from nuggets_app.ir.statap import ndcg_normaliser, statap_evaluate, statap_rows
from nuggets_app.ir.statap_nist import nist_report, perl_g

DATA = Path(__file__).resolve().parents[2] / "data" / "ir"
TOL = 1e-9


def tiny_run() -> dict[str, dict[str, float]]:
    lines = (DATA / "tiny.run").read_text().splitlines()
    entries = []
    for number, text in enumerate(lines, 1):
        qid, _q0, docno, _rank, score, _tag = text.split()
        entries.append((number, qid, docno, float(score)))
    return run_scores(entries, source="tiny.run")


def evaluate(**options):
    sampled_only = options.pop("sampled_only", False)
    prels = prels_load(
        parse_qrels(DATA / "tiny.prels", "prels"), sampled_only=sampled_only
    )
    return statap_evaluate(prels, tiny_run(), name="tiny", **options)


def load_text(text: str, **options):
    return prels_load(
        parse_qrels_text(text.splitlines(), "prels", source="x.prels"),
        source="x.prels",
        **options,
    )


def test_long_output_equals_the_scripts_byte_for_byte():
    text = nist_report([evaluate()], per_topic=True)
    assert text.stdout == (DATA / "tiny.q.expected").read_text()


def test_terse_output_equals_the_scripts_and_puts_the_summary_on_stderr():
    text = nist_report([evaluate()], per_topic=True, terse=True)
    assert text.stdout == (DATA / "tiny.qt.expected").read_text()
    assert (
        "statMAP_on_valid_topics=0.764666666666667 ( VAR_MAP=0.121634161135802 )"
        in (text.stderr)
    )


def test_topic_one_follows_the_hand_derivation():
    topic = evaluate().topics[0]
    assert topic.qid == "1"
    assert topic.label == "NEU"
    assert topic.est_r == pytest.approx(6.25, abs=TOL)
    assert (topic.n_sampled, topic.n_sampled_rel) == (5, 4)
    assert (topic.sampled_in_list, topic.sampled_rel_in_list) == (4, 3)
    assert topic.statap == pytest.approx(2.7875 / 6.25, abs=TOL)
    assert topic.rprec == pytest.approx(4.25 / 6.25, abs=TOL)
    assert topic.p30 == pytest.approx(4.25 / 30, abs=TOL)
    assert topic.ndcg == pytest.approx(2.3098122350 / 4.1309297536, abs=1e-9)
    assert topic.var == pytest.approx(0.037076768, abs=TOL)


def test_ndcg_normaliser_keeps_the_scripts_quirk():
    # a = 4 relevant, h = 1 highly relevant: 3/log2(2) + 1/log2(3) + 1/log2(4) only.
    assert ndcg_normaliser(4, 1) == pytest.approx(3 + 1 / math.log2(3) + 0.5, abs=TOL)


def test_methods_zero_and_two_count_as_certain_and_nothing_is_clipped():
    topic = evaluate().topics[1]
    assert topic.label == "MIXED"
    assert topic.est_r == pytest.approx(6.0, abs=TOL)
    assert topic.statap == pytest.approx(6.5 / 6, abs=TOL)
    assert topic.statap > 1
    assert topic.var == pytest.approx(0.44945987654321, abs=1e-12)


def test_summary_matches_the_script():
    summary = evaluate().summary
    assert summary.valid_topics == 2
    assert summary.stat_map == pytest.approx(0.764666666666667, abs=1e-12)
    assert summary.var_map == pytest.approx(0.121634161135802, abs=1e-12)
    assert summary.stat_mrp == pytest.approx(0.756666666666667, abs=1e-12)
    assert summary.stat_mpc30 == pytest.approx(0.154166666666667, abs=1e-12)
    assert summary.stat_mndcg == pytest.approx(0.662255665064801, abs=1e-12)


def test_option_f_drops_method_zero_and_keeps_method_two_probabilities():
    result = evaluate(sampled_only=True)
    topic = result.topics[1]
    assert topic.est_r == pytest.approx(6.5, abs=TOL)
    assert (topic.n_sampled, topic.n_sampled_rel) == (3, 2)
    assert topic.statap == pytest.approx(0.615385, abs=5e-7)
    assert topic.rprec == pytest.approx(0.615385, abs=5e-7)
    assert topic.p30 == pytest.approx(0.133333, abs=5e-7)
    assert perl_g(topic.ndcg) == "0.613147192765458"
    assert perl_g(topic.var) == "0.415671720177865"
    assert perl_g(result.summary.stat_map) == "0.530692307692308"


def test_options_n_and_m_keep_only_neu_or_mixed_topics():
    neu = evaluate(only="neu").summary
    mixed = evaluate(only="mixed").summary
    assert (neu.valid_topics, neu.stat_map) == (1, pytest.approx(0.446, abs=TOL))
    assert mixed.valid_topics == 1
    assert perl_g(mixed.stat_map) == "1.08333333333333"


def test_a_judged_topic_the_run_never_mentions_is_left_out():
    assert [t.qid for t in evaluate().topics] == ["1", "2", "3", "5"]


def test_stale_values_become_na_when_asked():
    text = nist_report([evaluate()], per_topic=True, stale=False).stdout
    assert "Prec_at_30=0  nDCG=NA\n\tvarAP=NA\n" in text


def test_confidence_interval_is_estimate_plus_minus_1_96_sd():
    topic = evaluate().topics[0]
    low, high = topic.ci95
    half = 1.96 * math.sqrt(0.037076768)
    assert low == pytest.approx(0.446 - half, abs=TOL)
    assert high == pytest.approx(0.446 + half, abs=TOL)


def test_rows_carry_the_measures_and_the_means():
    rows = {(m, q): v for m, q, v in statap_rows(evaluate(), per_topic=True)}
    assert rows["statAP", "1"] == pytest.approx(0.446, abs=TOL)
    assert rows["estR", "2"] == pytest.approx(6.0, abs=TOL)
    assert rows["statAP", "all"] == pytest.approx(0.764666666666667, abs=1e-12)
    assert rows["statAP_var", "all"] == pytest.approx(0.121634161135802, abs=1e-12)
    assert rows["valid_topics", "all"] == 2
    assert math.isnan(rows["statAP", "3"])
    assert ("statAP", "5") not in rows


def test_ties_are_broken_by_docno_descending_as_trec_eval():
    assert ranking_order({"a": 1.0, "c": 1.0, "b": 2.0}) == ["b", "c", "a"]


def test_placeholder_records_do_not_register_a_topic():
    prels = load_text("7 x -999 1 0.5\n8 y 1 1 0.5\n")
    assert list(prels) == ["8"]


def test_na_probabilities_register_a_topic_as_umass():
    prels = load_text("7 x 1 1 NA\n")
    assert prels["7"].label == "UMASS"


def test_non_contiguous_topics_are_rejected_with_the_line():
    with pytest.raises(
        StatapInputError, match=r"x\.prels:3: topic 1 is not contiguous"
    ):
        load_text("1 a 1 1 0.5\n2 b 1 1 0.5\n1 c 0 1 0.5\n")


def test_duplicate_documents_are_rejected():
    with pytest.raises(ImportFormatError, match=r"x\.prels:2: conflicting judgments"):
        load_text("1 a 1 1 0.5\n1 a 0 1 0.5\n")
    records = [PrelsRecord(1, "1", "a", 1, 1, 0.5), PrelsRecord(2, "1", "a", 0, 1, 0.5)]
    with pytest.raises(StatapInputError, match=r"x\.prels:2: document a listed twice"):
        prels_load(records, source="x.prels")


def test_a_relevant_document_with_probability_zero_is_rejected():
    # The importers refuse a probability of 0 in a file; a record built in memory
    # reaches the check of prels_load.
    records = [PrelsRecord(1, "1", "a", 0, 1, 0.0), PrelsRecord(2, "1", "b", 1, 1, 0.0)]
    with pytest.raises(StatapInputError, match=r"x\.prels:2: relevant document b has"):
        prels_load(records, source="x.prels")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1 a 1 1\n", "wrong number of columns for prels"),
        ("1 a abc 1 0.5\n", "relevance"),
        ("1 a 1.5 1 0.5\n", "relevance"),
        ("1 a 1 1 nan\n", "inclusion probability"),
        ("1 a 1 x 0.5\n", "method"),
        ("1 a 0 1 0\n", "inclusion probability outside"),
    ],
)
def test_malformed_prels_lines_name_file_and_line(text, problem):
    with pytest.raises(ImportFormatError, match=rf"x\.prels:1: .*{problem}"):
        load_text(text)


def test_runs_with_duplicates_or_split_topics_are_rejected():
    with pytest.raises(StatapInputError, match="r:2: document d listed twice"):
        run_scores([(1, "1", "d", 1.0), (2, "1", "d", 0.5)], source="r")
    with pytest.raises(StatapInputError, match="r:3: topic 1 is not contiguous"):
        run_scores(
            [(1, "1", "d", 1.0), (2, "2", "d", 0.5), (3, "1", "e", 0.1)], source="r"
        )


def test_one_sampled_document_gives_nan_variance_instead_of_dying():
    prels = load_text("1 a 1 1 0.5\n")
    topic = statap_evaluate(prels, {"1": {"a": 1.0}}).topics[0]
    assert topic.statap == pytest.approx(1.0, abs=TOL)
    assert math.isnan(topic.var)
    assert all(math.isnan(v) for v in topic.ci95)


def test_no_valid_topic_reports_zero_topics_and_nan_means():
    prels = load_text("1 a 0 1 0.5\n1 b 0 1 0.5\n")
    result = statap_evaluate(prels, {"1": {"a": 1.0}})
    assert result.summary.valid_topics == 0
    assert math.isnan(result.summary.stat_map)
    assert (
        "statMAP_on_valid_topics=NaN" in nist_report([result], per_topic=False).stdout
    )
