"""The simulated assessor's extraction and the report maths, on hand-made inputs."""

import gzip
import json
import re
from typing import NamedTuple

import pytest

from lab.maths import simulation as sim
from nuggets_app.errors import DomainError


class Tok(NamedTuple):
    term: str
    start: int
    end: int


STOP = {"the", "a", "of", "was", "is", "at", "and", "in"}


def simple_tokenizer(text: str) -> list[Tok]:
    """Lowercased words minus a few stopwords, no stemming: easy to score by hand."""
    return [
        Tok(m.group().lower(), m.start(), m.end())
        for m in re.finditer(r"\w+", text)
        if m.group().lower() not in STOP
    ]


def extract(docs, topic="wing flutter supersonic speed", **options):
    return sim.nuggets_extract(
        topic_text=topic,
        relevant_docs=docs,
        doc_freq={"wing": 50, "flutter": 5, "supersonic": 20, "speed": 80},
        options=sim.ExtractionOptions(**options),
        tokenizer=simple_tokenizer,
    )


def test_sentence_spans_exclude_surrounding_white_space():
    text = "  One. Two!  Three\nFour "
    assert sim.sentence_spans(text) == [(2, 6), (7, 11), (13, 18), (19, 23)]
    assert sim.sentence_spans("   ") == []


def test_sentences_sharing_topic_and_relevant_terms_are_chosen_first():
    docs = {
        "A": "The weather was fine. Panel flutter at supersonic speed. Wing tests.",
        "B": "Panel tests and flutter.",
    }
    nuggets = extract(docs, nuggets_per_doc=2)
    by_doc = [(n.docno, n.text, n.score) for n in nuggets]
    # A: "panel flutter supersonic speed" = 3 topic terms + panel (in B: 1/1) = 4;
    # "wing tests" = 1 + tests (in B) = 2; "weather fine" = 0 -> never a nugget.
    # B: "panel tests flutter" = 1 + panel + tests (both in A) = 3.
    assert by_doc == [
        ("A", "Panel flutter at supersonic speed", 4.0),
        ("A", "Wing tests", 2.0),
        ("B", "Panel tests and flutter", 3.0),
    ]


def test_offsets_point_at_the_nugget_text():
    docs = {"A": "Intro here.\n  Wing flutter begins; supersonic speed ends!"}
    for nugget in extract(docs, nuggets_per_doc=3):
        assert docs["A"][nugget.start : nugget.end] == nugget.text


def test_long_sentences_are_trimmed_to_the_best_window():
    docs = {
        "A": "Long words before the wing flutter supersonic region then more words."
    }
    (nugget,) = extract(docs, nuggets_per_doc=1, max_terms=3)
    assert nugget.text == "wing flutter supersonic"
    assert nugget.score == 3.0


def test_generic_nuggets_get_the_rarest_topic_terms_as_keywords():
    docs = {"A": "Speed and Flutter. Wing."}
    nuggets = extract(docs, nuggets_per_doc=2, min_terms=3, keywords=1)
    # Both sentences have fewer than 3 terms; keywords come from the sentence itself,
    # rarest first by document frequency (flutter 5 < speed 80), as written in the text.
    assert [(n.text, n.keywords) for n in nuggets] == [
        ("Speed and Flutter", ("Flutter",)),
        ("Wing", ("Wing",)),
    ]


def test_a_nugget_without_topic_terms_takes_keywords_from_its_document():
    docs = {
        "A": "Panel tests. Flutter here.",
        "B": "Panel tests again.",
    }
    nuggets = extract(docs, nuggets_per_doc=1, min_terms=1, keywords=2)
    assert nuggets[0].text == "Panel tests"
    assert nuggets[0].keywords == ("Flutter",)


def test_extraction_is_deterministic_whatever_the_input_order():
    docs = {"B": "Panel tests and flutter.", "A": "Panel flutter at supersonic speed."}
    assert extract(docs) == extract(dict(reversed(list(docs.items()))))


def test_bad_options_are_rejected():
    with pytest.raises(DomainError, match="max_terms"):
        sim.ExtractionOptions(max_terms=0)


def test_real_documents_get_exact_offsets_with_the_matcher_pipeline(shared_data):
    base = shared_data / "cranfield"
    with gzip.open(base / "docs.jsonl.gz", "rt") as lines:
        docs = {d["docno"]: d["text"] for d in map(json.loads, lines)}
    relevant = ["184", "29", "31", "12", "51"]  # qrels of topic 1
    topic = "what similarity laws must be obeyed when constructing aeroelastic models"
    options = sim.ExtractionOptions(nuggets_per_doc=2, max_terms=8)
    nuggets = sim.nuggets_extract(
        topic_text=topic, relevant_docs={d: docs[d] for d in relevant}, options=options
    )
    assert nuggets
    tokenize = sim.default_tokenizer()
    for docno in relevant:
        assert sum(n.docno == docno for n in nuggets) <= 2
    for nugget in nuggets:
        assert docs[nugget.docno][nugget.start : nugget.end] == nugget.text
        assert 1 <= len(tokenize(nugget.text)) <= 8


def test_set_quality_counts_within_the_universe():
    quality = sim.set_quality(
        predicted={"1": {"a", "b", "z"}},
        truth={"1": {"a", "c"}, "2": {"d"}},
        universe={"1": {"a", "b", "c"}, "2": {"d", "e"}},
    )
    assert (quality.true_positives, quality.false_positives) == (1, 1)
    assert quality.false_negatives == 2
    assert quality.precision == 0.5
    assert quality.recall == pytest.approx(1 / 3)
    assert quality.f1 == pytest.approx(0.4)


def test_found_curve_sums_topics_at_each_rank():
    curve = sim.found_curve(
        {"1": ["a", "b", "c"], "2": ["d"]}, {"1": {"b"}, "2": {"d"}}
    )
    assert curve == [(0, 0), (1, 1), (1, 2), (2, 2)]


def test_rules_parse_threshold_and_top_n():
    assert sim.rule_parse("threshold:0.5") == ("threshold", 0.5)
    assert sim.rule_parse("top:20") == ("top", 20)
    for bad in ("best:3", "threshold:1.5", "top:2.5", "top:x"):
        with pytest.raises(DomainError, match="rule"):
            sim.rule_parse(bad)
