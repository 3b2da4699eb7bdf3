"""Re-anchoring a nugget's span in a document's new text."""

from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.spans import span_reanchor, text_segments


def test_the_occurrence_nearest_the_old_start_wins_and_the_earlier_on_a_tie():
    text = "flow . flow . flow"
    assert span_reanchor(text, "flow", 6) == 7
    assert span_reanchor(text, "flow", 0) == 0
    assert span_reanchor(text, "flow", 17) == 14
    assert span_reanchor("ab..ab", "ab", 2) == 0  # 0 and 4 are both 2 away
    assert span_reanchor("ab..ab", "ab", 3) == 4


def test_a_span_that_is_gone_or_empty_cannot_be_anchored():
    assert span_reanchor("the new text", "old words", 3) is None
    assert span_reanchor("the new text", "", 3) is None


@given(
    before=st.text(max_size=40),
    span=st.text(min_size=1, max_size=20),
    after=st.text(max_size=40),
    inserted=st.text(max_size=30),
)
def test_text_inserted_before_a_unique_span_shifts_it_by_its_length(
    before, span, after, inserted
):
    old = before + span + after
    new = inserted + old
    if new.count(span) != 1:
        return  # several occurrences: covered by the nearest-occurrence test
    start = span_reanchor(new, span, len(before))
    assert start == len(inserted) + len(before)
    assert new[start : start + len(span)] == span


def test_text_segments_merge_overlapping_and_clip_spans():
    text = "abcdefghij"
    assert text_segments(text, [(2, 4), (3, 6), (8, 20), (-3, 1), (5, 5)]) == [
        ("a", True),
        ("b", False),
        ("cdef", True),
        ("gh", False),
        ("ij", True),
    ]
    assert text_segments(text, []) == [(text, False)]
