"""Judged-only measures (bpref, condensed AP) and the held-out rank-error summary,
against values worked by hand."""

from __future__ import annotations

import math

import pytest

from nuggets_app.errors import DomainError
from nuggets_app.ir.reusability import (
    bpref,
    condensed_ap,
    groups_parse,
    held_out,
    judged_mean,
    ranks,
    reusability_summary,
    run_groups,
)

# a relevant, b non-relevant, c unjudged, d relevant, e non-relevant; f relevant,
# never retrieved: R = 3, N = 2.
RANKING = ["a", "b", "c", "d", "e"]
JUDGED = {"a": 1, "b": 0, "d": 1, "e": 0, "f": 1}


def test_bpref_follows_trec_eval():
    # a: no non-relevant above, 1; d: one of min(R, N) = 2 above, 1 - 1/2.
    assert bpref(RANKING, JUDGED) == pytest.approx((1 + 0.5) / 3)


def test_bpref_without_judged_non_relevant_documents_counts_every_relevant_one():
    assert bpref(["a", "x", "d"], {"a": 1, "d": 1}) == pytest.approx(1.0)


def test_condensed_ap_drops_unjudged_documents():
    # condensed list a b d e: a at 1 (1/1), d at 3 (2/3), over R = 3.
    assert condensed_ap(RANKING, JUDGED) == pytest.approx((1 + 2 / 3) / 3)


def test_topics_without_a_judged_relevant_document_are_left_out_of_the_mean():
    judged = {"1": JUDGED, "2": {"a": 0}}
    assert judged_mean({"1": RANKING, "2": RANKING}, judged, "bpref") == pytest.approx(
        0.5
    )
    assert math.isnan(judged_mean({}, {"2": {"a": 0}}, "condensed_ap"))


def test_groups_by_shared_prefix():
    names = ["TUW19-p1-f", "TUW19-p2-re", "runid2", "runid5", "bm25base_p", "p_bert"]
    assert run_groups(names) == {
        "TUW19-p1-f": "TUW",
        "TUW19-p2-re": "TUW",
        "runid2": "runid",
        "runid5": "runid",
        "bm25base_p": "bm25base",
        "p_bert": "p",
    }


def test_a_groups_file_names_its_bad_line():
    assert groups_parse(["# runs", "a g1", "", "b g1"]) == {"a": "g1", "b": "g1"}
    with pytest.raises(DomainError, match=r"groups\.txt:2"):
        groups_parse(["a g1", "b"], source="groups.txt")
    with pytest.raises(DomainError, match="listed twice"):
        groups_parse(["a g1", "a g2"])


def test_rank_errors_drops_and_tau():
    full = {"r1": 0.4, "r2": 0.3, "r3": 0.2, "r4": 0.1}
    # r1 held out: scored 0.25 among the others' 0.3, 0.2, 0.1: rank 2 (drop 1).
    # r4 held out: scored 0.45: rank 1 (rise 3).
    rows = [
        held_out("r1", full=full, estimated={**full, "r1": 0.25}),
        held_out("r4", full=full, estimated={**full, "r4": 0.45}),
    ]
    assert [(r.full_rank, r.rank) for r in rows] == [(1, 2), (4, 1)]
    summary = reusability_summary(rows, full)
    assert summary["mean_abs_rank_error"] == pytest.approx(2.0)
    assert summary["max_rank_drop"] == 1
    assert summary["mean_rel_error"] == pytest.approx((0.15 / 0.4 + 0.35 / 0.1) / 2)
    assert summary["tau"] == pytest.approx(-1.0)


def test_ranks_put_nan_last_and_break_ties_by_name():
    assert ranks({"b": 0.5, "a": 0.5, "c": math.nan}) == {"a": 1, "b": 2, "c": 3}
