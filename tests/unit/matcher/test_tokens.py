"""Tokens: casefolded runs of letters and digits, offsets into the original text."""

import pytest

from matcher import MatchOptions, PreparedText, tokenize

RAW = MatchOptions(stem="none", stopwords="none")


def test_tokens_keep_offsets_in_the_original_text():
    text = "  The PRESIDENT's  4th-term,\telected_in 1960!"
    tokens = tokenize(text, RAW)
    assert [t.term for t in tokens] == [
        "the",
        "president",
        "s",
        "4th",
        "term",
        "elected",
        "in",
        "1960",
    ]
    assert [text[t.start : t.end] for t in tokens] == [
        "The",
        "PRESIDENT",
        "s",
        "4th",
        "term",
        "elected",
        "in",
        "1960",
    ]


def test_stopwords_are_dropped_unstemmed_and_do_not_take_positions():
    tokens = tokenize("The presidents of the United States")
    assert [t.term for t in tokens] == ["presid", "unit", "state"]
    assert PreparedText(
        "The presidents of the United States", MatchOptions()
    ).terms == [
        "presid",
        "unit",
        "state",
    ]


def test_stemming_and_stopwords_can_be_switched_off():
    assert [t.term for t in tokenize("The presidents", RAW)] == ["the", "presidents"]
    options = MatchOptions(stem="none")
    assert [t.term for t in tokenize("The presidents", options)] == ["presidents"]


@pytest.mark.parametrize(
    ("text", "terms", "surfaces"),
    [
        ("Straße in Köln", ["strasse", "in", "köln"], ["Straße", "in", "Köln"]),
        ("ΣΊΣΥΦΟΣ ok", ["σίσυφοσ", "ok"], ["ΣΊΣΥΦΟΣ", "ok"]),
        ("ﬁne café", ["fine", "café"], ["ﬁne", "café"]),
        ("naïve_rôle 東京", ["naïve", "rôle", "東京"], ["naïve", "rôle", "東京"]),
    ],
)
def test_unicode_casefolding_maps_offsets_back_to_the_original_characters(
    text, terms, surfaces
):
    tokens = tokenize(text, RAW)
    assert [t.term for t in tokens] == terms
    assert [text[t.start : t.end] for t in tokens] == surfaces


def test_prepared_text_gives_spans_of_position_ranges():
    text = "Alpha, beta; GAMMA delta"
    prepared = PreparedText(text, RAW)
    assert prepared.spans([(0, 2), (3, 3), (1, 1)]) == [(0, 18), (19, 24), (7, 11)]
    assert prepared.offsets(2) == (13, 18)


def test_the_pipeline_version_names_stemmer_and_stopword_list():
    from importlib.metadata import version

    from matcher import pipeline_version

    default = pipeline_version(MatchOptions())
    assert default.startswith(f"porter/nltk-{version('nltk')};stopwords/default-")
    assert pipeline_version(RAW).startswith("none;stopwords/none-")
    # k and lambda do not touch the text pipeline.
    assert pipeline_version(MatchOptions(k=5, lam=0.9)) == default
