"""Windows of a text, the nearest window per nugget, the combined score, and the
semantic features' leave-one-out (hand-made vectors; no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from lab.maths.matcher_eval import (
    GoldNugget,
    Unit,
    combined_scores,
    semantic_scores,
)
from nuggets_app.learning.semantic import (
    EmbeddingCache,
    Window,
    best_windows,
    combined_score,
    text_windows,
)
from nuggets_app.learning.semantic_features import (
    document_vector,
    semantic_evidence,
    semantic_features,
)

TEXT = "Three people died. Many were hurt!\nPolice came. It rained all day."


def _spans(text: str, max_words: int) -> list[str]:
    return [text[s:e] for s, e in text_windows(text, max_words=max_words)]


@pytest.mark.parametrize("max_words", [0, 1])
def test_one_sentence_per_window(max_words: int) -> None:
    assert _spans(TEXT, max_words) == [
        "Three people died.",
        "Many were hurt!",
        "Police came.",
        "It rained all day.",
    ]


def test_sentences_are_packed_up_to_max_words() -> None:
    assert _spans(TEXT, 6) == [
        "Three people died. Many were hurt!",
        "Police came. It rained all day.",
    ]
    assert _spans(TEXT, 100) == [TEXT]


def test_a_long_sentence_is_cut_into_pieces_of_max_words() -> None:
    text = "Short one. Long " + "word " * 10 + "end."
    assert [len(w.split()) for w in _spans(text, 5)] == [2, 5, 5, 2]
    assert _spans(text, 5)[-1] == "word end."


def test_a_text_without_sentence_marks_is_still_cut() -> None:
    text = "the flow past a plate . the boundary layer grows . heat moves"
    assert _spans(text, 4) == [
        "the flow past a",
        "plate . the boundary",
        "layer grows . heat",
        "moves",
    ]


def test_one_sentence_per_window_never_cuts() -> None:
    text = "Short one. Long " + "word " * 10 + "end."
    assert _spans(text, 0) == ["Short one.", "Long " + "word " * 10 + "end."]


def test_an_abbreviation_before_a_lower_case_word_does_not_end_a_sentence() -> None:
    assert _spans("The U.S. army left. Then rain.", 0) == [
        "The U.S. army left.",
        "Then rain.",
    ]


def test_a_blank_text_has_no_window() -> None:
    assert text_windows("  \n ") == []
    assert text_windows("one") == [Window(0, 3)]


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_best_window_per_nugget_floored_at_zero() -> None:
    windows = np.vstack([_unit(1, 0, 0), _unit(0, 1, 0)])
    nuggets = np.vstack([_unit(1, 1, 0), _unit(0, 0, 1), _unit(-1, 0, 0)])
    found = best_windows(windows, nuggets)
    assert found[0].window == 0
    assert found[0].similarity == pytest.approx(2**-0.5)
    assert found[1].similarity == 0.0
    assert found[2].similarity == 0.0
    assert best_windows(np.zeros((0, 3), np.float32), nuggets)[0].window == -1


def test_combined_score_weighs_minspan() -> None:
    assert combined_score(1.0, 0.2, weight=0.25) == pytest.approx(0.4)
    merged = combined_scores({("q", "u", "n"): 0.8}, {("q", "u", "m"): 0.4}, weight=0.5)
    assert merged == {("q", "u", "n"): pytest.approx(0.4), ("q", "u", "m"): 0.2}


def test_semantic_scores_take_the_nearest_window_of_the_unit() -> None:
    vectors = {
        "Three people died.": _unit(1, 0),
        "Many were hurt!": _unit(0, 1),
        "killed": _unit(1, 0.1),
        "injured": _unit(0.6, 0.8),
    }
    calls: list[list[str]] = []

    def embed(texts):
        calls.append(list(texts))
        return np.vstack([vectors[t] for t in texts])

    units = [Unit("u1", "q", "Three people died. Many were hurt!")]
    nuggets = [GoldNugget("n1", "q", "killed"), GoldNugget("n2", "q", "injured")]
    scores = semantic_scores(units, nuggets, embed, max_words=0)
    assert scores[("q", "u1", "n1")] == pytest.approx(float(_unit(1, 0.1)[0]))
    assert scores[("q", "u1", "n2")] == pytest.approx(0.8)
    assert len(calls) == 1


def test_the_cache_embeds_each_text_once() -> None:
    seen: list[str] = []

    def embed(texts):
        seen.extend(texts)
        return np.vstack([_unit(len(t), 1) for t in texts])

    cache = EmbeddingCache(embed, 2)
    first = cache.vectors(["a", "bb", "a"])
    again = cache.vectors(["bb", "ccc"])
    assert seen == ["a", "bb", "ccc"]
    np.testing.assert_array_equal(first[1], again[0])
    assert len(cache) == 3


def test_semantic_features_leave_out_the_documents_own_nuggets_and_label() -> None:
    d1 = np.vstack([_unit(1, 0, 0), _unit(0, 1, 0)])  # judged relevant, has a nugget
    d2 = np.vstack([_unit(0, 0, 1)])  # judged relevant
    evidence = semantic_evidence(
        nuggets=[(_unit(1, 0, 0), "d1"), (_unit(0, 0.6, 0.8), "d2")],
        relevant_windows={"d1": d1, "d2": d2},
        dimension=3,
    )
    # d1: only d2's nugget counts (0.6 with d1's second window); relevant: only d2.
    nugget_max, nugget_mean, relevant, topic = semantic_features(evidence, "d1", d1)
    assert topic == 0.0  # no statement
    assert (nugget_max, nugget_mean) == (pytest.approx(0.6), pytest.approx(0.6))
    assert relevant == pytest.approx(float(document_vector(d1) @ _unit(0, 0, 1)))
    # An unjudged document sees both nuggets and both relevant documents.
    d3 = np.vstack([_unit(1, 0, 0)])
    nugget_max, nugget_mean, relevant, _ = semantic_features(evidence, "d3", d3)
    assert (nugget_max, nugget_mean) == (pytest.approx(1.0), pytest.approx(0.5))
    assert relevant == pytest.approx((2**-0.5 + 0.0) / 2)
    # Without windows every feature is 0.
    empty = np.zeros((0, 3), np.float32)
    assert semantic_features(evidence, "d4", empty) == (0.0, 0.0, 0.0, 0.0)


def test_the_only_relevant_document_has_no_relevant_similarity() -> None:
    d1 = np.vstack([_unit(1, 0)])
    evidence = semantic_evidence(nuggets=[], relevant_windows={"d1": d1}, dimension=2)
    assert semantic_features(evidence, "d1", d1) == (0.0, 0.0, 0.0, 0.0)


def test_topic_similarity_is_the_best_window_and_ignores_labels() -> None:
    """The statement's highest cosine to a window, floored at 0, the same for a judged
    relevant document as for an unjudged copy of it."""
    d1 = np.vstack([_unit(1, 0, 0), _unit(0.6, 0.8, 0)])
    topic = _unit(0, 1, 0)
    judged = semantic_evidence(
        nuggets=[], relevant_windows={"d1": d1}, dimension=3, topic=topic
    )
    unjudged = semantic_evidence(
        nuggets=[], relevant_windows={}, dimension=3, topic=topic
    )
    assert semantic_features(judged, "d1", d1)[3] == pytest.approx(0.8)
    assert semantic_features(unjudged, "d1", d1)[3] == pytest.approx(0.8)
    away = np.vstack([_unit(0, -1, 0)])
    assert semantic_features(unjudged, "d2", away)[3] == 0.0
