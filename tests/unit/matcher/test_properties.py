"""Property tests against a brute-force reference of docs/reference/algorithms.md section 4.

The reference scans every window of the document for every shingle, straight
from the definitions; the matcher under test must agree to 1e-9, pick the same
best nugget, and report the earliest smallest window of each shingle.
"""

import math
import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from matcher import (
    Evidence,
    MatchOptions,
    NuggetSpec,
    TopicMatcher,
    rescore,
    tokenize,
)

WORDS = ["ab", "cd", "ef", "gh", "AB", "Cd"]
SEPARATORS = [" ", "  ", ", ", ". ", "\n", "-", "_", " (", ") "]
RAW = {"stem": "none", "stopwords": "none"}


def reference_shingles(terms, k):
    if not terms:
        return []
    if len(terms) < k:
        return [terms]
    return [terms[i : i + k] for i in range(len(terms) - k + 1)]


def reference_window(doc, shingle):
    """(S, first) of the earliest smallest window holding the multiset, or None."""
    need = Counter(shingle)
    best = None
    for first in range(len(doc)):
        for last in range(first, len(doc)):
            have = Counter(doc[first : last + 1])
            if all(have[w] >= c for w, c in need.items()):
                size = last - first + 1
                if best is None or size < best[0]:
                    best = (size, first)
                break
    return best


def reference_scores(doc, nuggets, k, lam):
    """Score of each nugget (by id), and per nugget the windows of its shingles."""
    scores, windows = {}, {}
    for nugget_id, terms in nuggets:
        shingles = reference_shingles(terms, k)
        if not shingles:
            continue
        found = [reference_window(doc, s) for s in shingles]
        windows[nugget_id] = found
        scores[nugget_id] = sum(
            lam ** ((w[0] - len(s)) / len(s))
            for s, w in zip(shingles, found, strict=True)
            if w
        ) / len(shingles)
    return scores, windows


@st.composite
def documents(draw):
    words = draw(st.lists(st.sampled_from(WORDS), max_size=14))
    seps = draw(
        st.lists(
            st.sampled_from(SEPARATORS),
            min_size=len(words) + 1,
            max_size=len(words) + 1,
        )
    )
    text, offsets = seps[0], []
    for word, sep in zip(words, seps[1:], strict=True):
        offsets.append((len(text), len(text) + len(word)))
        text += word + sep
    return text, [w.casefold() for w in words], offsets


nugget_lists = st.lists(
    st.lists(st.sampled_from(WORDS), max_size=6), min_size=1, max_size=4
)
lambdas = st.floats(min_value=1e-3, max_value=1.0, exclude_min=False)


@settings(max_examples=200)
@given(documents(), nugget_lists, st.integers(1, 5), lambdas)
def test_scores_best_nugget_and_spans_equal_the_brute_force_reference(
    doc, nuggets, k, lam
):
    text, terms, offsets = doc
    specs = [NuggetSpec(f"n{i}", " ".join(words)) for i, words in enumerate(nuggets)]
    folded = [
        (f"n{i}", [w.casefold() for w in words]) for i, words in enumerate(nuggets)
    ]
    matcher = TopicMatcher(specs, MatchOptions(k=k, lam=lam, **RAW))
    match = matcher.score(text)
    scores, windows = reference_scores(terms, folded, k, lam)

    expected = max(scores.values(), default=0.0)
    assert math.isclose(match.score, expected, abs_tol=1e-9)
    assert matcher.unusable == tuple(
        f"n{i}" for i, words in enumerate(nuggets) if not words
    )
    if expected == 0:
        assert (match.nugget, match.spans) == (None, ())
        return
    near_best = [n for n, s in scores.items() if s >= expected - 1e-12]
    assert match.nugget in near_best
    # An exact tie goes to the first nugget; scores a rounding error apart (lambda a
    # hair below 1 makes lambda**3 and 1 differ by 3e-16) go to the higher one.
    if len({scores[n] for n in near_best}) == 1:
        assert match.nugget == near_best[0]
    spans = [
        (offsets[first][0], offsets[first + size - 1][1])
        for size, first in filter(None, windows[match.nugget])
    ]
    assert list(match.spans) == spans
    for (start, end), shingle_terms in zip(
        match.spans, _matched_shingles(folded, match, k, windows), strict=True
    ):
        covered = [
            t
            for t, (s, e) in zip(terms, offsets, strict=True)
            if start <= s and e <= end
        ]
        assert not Counter(shingle_terms) - Counter(covered)
        assert 0 <= start < end <= len(text)


def _matched_shingles(folded, match, k, windows):
    terms = dict(folded)[match.nugget]
    return [
        s
        for s, w in zip(
            reference_shingles(terms, k), windows[match.nugget], strict=True
        )
        if w
    ]


@settings(max_examples=100)
@given(documents(), nugget_lists, st.integers(1, 5), lambdas, lambdas)
def test_stored_evidence_rescored_equals_scoring_again(doc, nuggets, k, lam, new_lam):
    text, _, _ = doc
    specs = [NuggetSpec(f"n{i}", " ".join(words)) for i, words in enumerate(nuggets)]
    matcher = TopicMatcher(specs, MatchOptions(k=k, lam=lam, **RAW))
    stored = matcher.score(text).evidence.to_json()
    again = TopicMatcher(specs, MatchOptions(k=k, lam=new_lam, **RAW)).score(text)

    evidence = Evidence.from_json(dict(reversed(stored.items())), matcher.shingle_sizes)
    score, nugget = rescore(evidence, new_lam)
    assert math.isclose(score, again.score, abs_tol=1e-9)
    assert nugget == again.nugget
    assert matcher.rescorer(new_lam)(stored) == (score, nugget)


PIPELINE_WORDS = [
    "Election",
    "elected",
    "the",
    "of",
    "Presidents",
    "president",
    "in",
    "ran",
]


@settings(max_examples=100)
@given(
    st.lists(st.sampled_from(PIPELINE_WORDS), max_size=12),
    st.lists(st.sampled_from(PIPELINE_WORDS), max_size=6),
)
def test_default_pipeline_equals_the_reference_pipeline(words, nugget):
    from nltk.stem.porter import PorterStemmer

    from matcher import default_stopwords

    stem = PorterStemmer().stem
    text = " ".join(words)

    def reference(t):
        return [
            stem(w)
            for w in re.findall(r"[^\W_]+", t.casefold())
            if w not in default_stopwords()
        ]

    tokens = tokenize(text)
    assert [t.term for t in tokens] == reference(text)
    assert all(
        text[t.start : t.end].casefold() not in default_stopwords() for t in tokens
    )
    scores, _ = reference_scores(
        reference(text), [("n", reference(" ".join(nugget)))], 3, 0.5
    )
    match = TopicMatcher([NuggetSpec("n", " ".join(nugget))]).score(text)
    assert math.isclose(match.score, scores.get("n", 0.0), abs_tol=1e-9)


@settings(max_examples=300)
@given(st.text(max_size=40))
def test_tokens_follow_the_specified_regex_on_any_unicode_text(text):
    tokens = tokenize(text, MatchOptions(**RAW))
    assert [t.term for t in tokens] == re.findall(r"[^\W_]+", text.casefold())
    previous_end = 0
    for token in tokens:
        assert previous_end <= token.start < token.end <= len(text)
        previous_end = token.end
        # The original characters fold to a text that contains the token.
        assert token.term in text[token.start : token.end].casefold()
