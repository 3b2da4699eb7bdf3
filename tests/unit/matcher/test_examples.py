"""The worked examples and edge cases of docs/reference/algorithms.md section 4.4 (lambda 0.5, k 3)."""

import pytest

from matcher import (
    MatcherError,
    MatchOptions,
    NuggetSpec,
    TopicMatcher,
    default_stopwords,
    min_span,
    normalize,
    nugget_shingles,
    rescore,
)

# The token lists are the normative inputs; "raw" options feed them unchanged.
RAW = MatchOptions(stem="none", stopwords="none")
N1 = ["john", "kennedi", "elect", "presid", "1960"]
D1 = ["1960", "john", "fitzgerald", "kennedi", "elect", "presid", "unit", "state"]
D2 = ["nixon", "lost", "1960", "elect", "kennedi", "won", "presid"]
N1_TEXT = "John Kennedy was elected president in 1960"
D1_TEXT = (
    "In 1960 John Fitzgerald Kennedy was elected as the president of the United States"
)
D2_TEXT = "Nixon lost the 1960 election; Kennedy won the presidency"


def score_tokens(nugget: list[str], doc: list[str], options: MatchOptions = RAW):
    matcher = TopicMatcher([NuggetSpec("n", " ".join(nugget))], options)
    return matcher.score(" ".join(doc))


def test_the_pipeline_turns_the_sentences_into_the_normative_token_lists():
    assert normalize(N1_TEXT) == N1
    assert normalize(D1_TEXT) == D1
    assert normalize(D2_TEXT) == D2
    assert normalize("Bora Bora") == ["bora", "bora"]
    assert normalize("New York, New Jersey") == ["new", "york", "new", "jersey"]


def test_the_stopword_list_holds_the_examples_stopwords_but_no_content_word():
    stopwords = default_stopwords()
    assert {"in", "was", "as", "the", "of"} <= stopwords
    content = "john kennedy elected president 1960 fitzgerald united states nixon lost"
    content += " election won presidency bora island lagoon new york jersey"
    assert not stopwords & set(content.split())


def test_n1_has_three_shingles_of_size_three():
    assert nugget_shingles(N1, 3) == [
        ("john", "kennedi", "elect"),
        ("kennedi", "elect", "presid"),
        ("elect", "presid", "1960"),
    ]


@pytest.mark.parametrize(
    ("shingle", "expected"),
    [
        (("john", "kennedi", "elect"), (4, 1)),
        (("kennedi", "elect", "presid"), (3, 3)),
        (("elect", "presid", "1960"), (6, 0)),
    ],
)
def test_example_1_smallest_windows(shingle, expected):
    assert min_span(D1, dict.fromkeys(shingle, 1)) == expected


def test_example_1_nugget_score_and_shingle_scores():
    match = score_tokens(N1, D1)
    assert match.score == pytest.approx(0.7645668419946999, abs=1e-9)
    assert match.nugget == "n"
    assert match.evidence.to_json() == {"n": [4, 3, 6]}
    (item,) = match.evidence.nuggets
    shingle_scores = [0.5 ** ((s - 3) / 3) for s in item.lengths]
    assert shingle_scores == pytest.approx([0.7937005259840998, 1, 0.5], abs=1e-9)


def test_example_1_on_the_raw_sentences_gives_the_same_score_and_spans():
    match = TopicMatcher([NuggetSpec("N1", N1_TEXT)]).score(D1_TEXT)
    assert match.score == pytest.approx(0.7645668419946999, abs=1e-9)
    # Earliest smallest windows: A = positions 1..4, B = 3..5, C = 0..5.
    john = D1_TEXT.index("John")
    kennedy = D1_TEXT.index("Kennedy")
    year = D1_TEXT.index("1960")
    elected_end = D1_TEXT.index("elected") + len("elected")
    president_end = D1_TEXT.index("president") + len("president")
    assert match.spans == (
        (john, elected_end),
        (kennedy, president_end),
        (year, president_end),
    )


def test_example_2_a_missing_word_zeroes_one_shingle():
    match = score_tokens(N1, D2)
    assert match.evidence.to_json() == {"n": [None, 4, 5]}
    assert match.score == pytest.approx(0.4745536836438455, abs=1e-9)
    raw = TopicMatcher([NuggetSpec("N1", N1_TEXT)]).score(D2_TEXT)
    assert raw.score == pytest.approx(0.4745536836438455, abs=1e-9)
    assert len(raw.spans) == 2


def test_example_3_short_nugget_with_a_repeated_word():
    assert score_tokens(
        ["bora", "bora"], ["bora", "island", "bora", "lagoon"]
    ).score == (pytest.approx(0.7071067811865476, abs=1e-9))
    one_copy = score_tokens(["bora", "bora"], ["bora", "island", "lagoon"])
    assert one_copy.score == 0
    assert one_copy.nugget is None
    assert one_copy.spans == ()


def test_example_3_new_york_new_jersey():
    match = score_tokens(
        ["new", "york", "new", "jersey"], ["new", "jersey", "york", "new"]
    )
    assert match.evidence.to_json() == {"n": [4, 3]}
    assert match.score == pytest.approx(0.8968502629920498, abs=1e-9)


def test_document_score_is_the_max_over_nuggets():
    matcher = TopicMatcher([NuggetSpec("N2", "Bora Bora"), NuggetSpec("N1", N1_TEXT)])
    match = matcher.score(D1_TEXT)
    assert match.score == pytest.approx(0.7645668419946999, abs=1e-9)
    assert match.nugget == "N1"
    assert matcher.nugget_scores(D1_TEXT) == {
        "N2": 0.0,
        "N1": pytest.approx(0.7645668419946999, abs=1e-9),
    }


def test_lambda_one_scores_any_full_match_as_one():
    match = score_tokens(N1, D2, MatchOptions(lam=1.0, stem="none", stopwords="none"))
    assert match.score == pytest.approx(2 / 3, abs=1e-9)
    full = score_tokens(N1, D1, MatchOptions(lam=1.0, stem="none", stopwords="none"))
    assert full.score == 1.0


def test_a_one_word_nugget_scores_one_wherever_the_word_occurs():
    match = score_tokens(["kennedi"], D1)
    assert match.score == 1.0
    assert match.evidence.to_json() == {"n": [1]}


def test_an_empty_document_scores_zero():
    match = TopicMatcher([NuggetSpec("N1", N1_TEXT)]).score("")
    assert (match.score, match.nugget, match.spans) == (0.0, None, ())


def test_a_nugget_made_only_of_stopwords_is_excluded():
    matcher = TopicMatcher([NuggetSpec("stop", "in the of"), NuggetSpec("N1", N1_TEXT)])
    assert matcher.unusable == ("stop",)
    assert matcher.usable == ("N1",)
    assert matcher.score("in the of").score == 0.0


def test_a_topic_without_usable_nuggets_scores_every_document_zero():
    matcher = TopicMatcher([NuggetSpec("stop", "as was")])
    assert matcher.score(D1_TEXT).score == 0.0


def test_a_shingle_of_one_word_three_times_needs_three_positions():
    assert score_tokens(["x", "x", "x"], ["x", "y", "x"]).score == 0.0
    match = score_tokens(["x", "x", "x"], ["x", "y", "x", "z", "x"])
    assert match.evidence.to_json() == {"n": [5]}
    assert match.score == pytest.approx(0.5 ** (2 / 3), abs=1e-9)


def test_ties_go_to_the_first_nugget_in_input_order():
    matcher = TopicMatcher(
        [NuggetSpec("b", "kennedi elect"), NuggetSpec("a", "elect kennedi")], RAW
    )
    assert matcher.score(" ".join(D1)).nugget == "b"


def test_keywords_gate_a_nugget():
    gated = NuggetSpec("N1", N1_TEXT, keywords=("Nixon",))
    matcher = TopicMatcher([gated])
    assert matcher.score(D1_TEXT).score == 0.0
    assert matcher.score(D1_TEXT).evidence.nuggets == ()
    assert matcher.score(D2_TEXT).score == pytest.approx(0.4745536836438455, abs=1e-9)
    # Keywords are normalized like the text: "Presidency" stems to presid.
    matcher = TopicMatcher(
        [NuggetSpec("N1", N1_TEXT, keywords=("Presidency elected",))]
    )
    assert matcher.score(D1_TEXT).score == pytest.approx(0.7645668419946999, abs=1e-9)


def test_stored_evidence_rescores_for_a_new_lambda_without_the_text():
    match = score_tokens(N1, D2)
    score, nugget = rescore(match.evidence, 0.8)
    assert nugget == "n"
    assert score == pytest.approx((0.8 ** (1 / 3) + 0.8 ** (2 / 3)) / 3, abs=1e-12)
    assert rescore(match.evidence, 0.5)[0] == pytest.approx(
        0.4745536836438455, abs=1e-9
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"k": 0}, "k: must be an integer >= 1"),
        ({"lam": 0.0}, r"lam: must be in \(0, 1\]"),
        ({"lam": 1.5}, r"lam: must be in \(0, 1\]"),
        ({"lam": float("nan")}, r"lam: must be in \(0, 1\]"),
        ({"stem": "snowball"}, "stem: must be one of porter, none"),
        ({"stopwords": "fr"}, "stopwords: must be one of default, none"),
    ],
)
def test_options_are_validated(options, message):
    with pytest.raises(MatcherError, match=message):
        MatchOptions(**options)


def test_nugget_ids_must_be_unique_within_a_topic():
    with pytest.raises(MatcherError, match="nugget a: duplicate nugget id"):
        TopicMatcher([NuggetSpec("a", "x"), NuggetSpec("a", "y")])


def test_a_nugget_with_wrongly_typed_fields_is_refused():
    with pytest.raises(MatcherError, match="keywords must be a list of strings"):
        NuggetSpec("a", "x", keywords="word")
    with pytest.raises(MatcherError, match="grade must be an integer"):
        NuggetSpec("a", "x", grade="2")


def test_one_prepared_text_serves_several_topics_of_the_same_pipeline():
    first = TopicMatcher([NuggetSpec("N1", N1_TEXT)])
    second = TopicMatcher([NuggetSpec("N2", "Bora Bora")], MatchOptions(k=2, lam=0.9))
    prepared = first.prepare(D1_TEXT)
    assert first.score_prepared(prepared) == first.score(D1_TEXT)
    assert second.score_prepared(prepared).score == 0.0
    with pytest.raises(MatcherError, match="prepared with stem/stopwords"):
        TopicMatcher([NuggetSpec("N1", N1_TEXT)], RAW).score_prepared(prepared)
