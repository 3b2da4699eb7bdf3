"""Agreement measures against published worked examples and brute-force references."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.agreement import cohen_kappa, percent_agreement, span_overlap
from nuggets_app.ir.spans import covered_chars, intersect_chars, merge_spans


def _from_table(yy: int, yn: int, ny: int, nn: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (rows: rater A yes/no; cols: rater B)."""
    a = ["yes"] * (yy + yn) + ["no"] * (ny + nn)
    b = ["yes"] * yy + ["no"] * yn + ["yes"] * ny + ["no"] * nn
    return a, b


# Worked examples of the Wikipedia article "Cohen's kappa" (section "Examples"):
# 20/5/10/15 -> p_o 0.7, p_e 0.5, kappa 0.4; the two "same agreement, different kappa"
# tables 45/15/25/15 -> 0.1304 and 25/35/5/35 -> 0.2593.
@pytest.mark.parametrize(
    ("table", "p_o", "kappa"),
    [
        ((20, 5, 10, 15), 0.7, 0.4),
        ((45, 15, 25, 15), 0.6, 0.1304),
        ((25, 35, 5, 35), 0.6, 0.2593),
    ],
)
def test_kappa_matches_the_published_worked_examples(table, p_o, kappa):
    a, b = _from_table(*table)
    assert percent_agreement(a, b) == pytest.approx(p_o)
    assert cohen_kappa(a, b) == pytest.approx(kappa, abs=5e-5)


def test_kappa_is_one_for_perfect_agreement_and_nan_when_undefined():
    assert cohen_kappa([0, 1, 2, 1], [0, 1, 2, 1]) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert math.isnan(cohen_kappa([], []))


def test_it_rejects_label_lists_of_different_length():
    with pytest.raises(ValueError, match="differ in length: 2 != 1"):
        cohen_kappa([0, 1], [0])


def _kappa_reference(a, b):
    """Textbook confusion-matrix computation, written independently of the module."""
    labels = sorted(set(a) | set(b))
    n = len(a)
    matrix = {(x, y): 0 for x in labels for y in labels}
    for x, y in zip(a, b, strict=True):
        matrix[(x, y)] += 1
    p_o = sum(matrix[(c, c)] for c in labels) / n
    row = {c: sum(matrix[(c, y)] for y in labels) for c in labels}
    col = {c: sum(matrix[(x, c)] for x in labels) for c in labels}
    p_e = sum(row[c] * col[c] for c in labels) / (n * n)
    return None if p_e == 1 else (p_o - p_e) / (1 - p_e)


@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=60)
)
def test_kappa_equals_the_confusion_matrix_reference(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    expected = _kappa_reference(a, b)
    got = cohen_kappa(a, b)
    if expected is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


spans = st.lists(
    st.tuples(st.integers(0, 80), st.integers(0, 20)).map(
        lambda t: (t[0], t[0] + t[1])
    ),
    max_size=8,
)


def _chars(span_list):
    return {i for start, end in span_list for i in range(start, end)}


@given(spans, spans)
def test_span_overlap_equals_character_set_reference(a, b):
    ca, cb = _chars(a), _chars(b)
    overlap = span_overlap(a, b)
    assert covered_chars(a) == len(ca)
    assert intersect_chars(a, b) == len(ca & cb)
    assert overlap.union_chars == len(ca | cb)
    assert _chars(merge_spans(a)) == ca
    if ca | cb:
        assert overlap.jaccard == pytest.approx(len(ca & cb) / len(ca | cb))
        assert overlap.dice == pytest.approx(2 * len(ca & cb) / (len(ca) + len(cb)))
    else:
        assert math.isnan(overlap.jaccard)


def test_span_overlap_of_a_worked_example():
    # A covers [0,10) and [20,30) = 20 chars, B covers [5,25) = 20 chars; both = 5 + 5.
    overlap = span_overlap([(0, 10), (20, 30)], [(5, 25)])
    assert overlap == (20, 20, 10, 30, pytest.approx(1 / 3), pytest.approx(0.5))
    assert merge_spans([(3, 5), (0, 2), (2, 3), (7, 7)]) == [(0, 5)]
