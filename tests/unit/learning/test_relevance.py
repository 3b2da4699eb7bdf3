"""The relevance model: leave-one-out features, BM25 against the retrieval module,
probabilities, JSON, and a fit on the real MEDLINE collection checked for calibration."""

from __future__ import annotations

import dataclasses
import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.maths.simulation import nuggets_extract
from matcher import normalize
from nuggets_app.ir.measures import average_precision
from nuggets_app.learning import retrieval
from nuggets_app.learning.relevance_features import (
    FEATURE_NAMES,
    CorpusStats,
    NuggetText,
    RelevanceModelError,
    bm25_score,
    document_features,
    topic_evidence,
)
from nuggets_app.learning.relevance_model import (
    SHIFT_BOUND,
    RelevanceModel,
    anchor_shift,
    horvitz_thompson_relevant,
    logistic_fit,
    model_fit,
    model_logits,
    model_predict,
)

WORDS = [f"w{i}" for i in range(12)]
documents = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12)


@st.composite
def topics(draw):
    """A small corpus, a topic, judged labels, nuggets from judged relevant docs."""
    docs = draw(
        st.dictionaries(
            st.sampled_from([f"d{i}" for i in range(8)]),
            documents,
            min_size=2,
            max_size=8,
        )
    )
    names = sorted(docs)
    judged = {d: draw(st.booleans()) for d in names if draw(st.booleans())}
    nuggets = [
        NuggetText(tuple(draw(documents)), d, f"n{i}")
        for i, d in enumerate(sorted(judged))
        if judged[d] and draw(st.booleans())
    ]
    nuggets.append(NuggetText(tuple(draw(documents)), None, "free"))
    minspan = {
        d: {n.id: draw(st.floats(0, 1)) for n in nuggets if draw(st.booleans())}
        for d in names
    }
    return docs, draw(documents), judged, nuggets, minspan


def _features(docs, topic, judged, nuggets, minspan, docno):
    stats = CorpusStats.from_tokens(docs.values())
    evidence = topic_evidence(
        topic_terms=topic,
        nuggets=nuggets,
        judged=judged,
        relevant_terms={d: docs[d] for d, rel in judged.items() if rel},
        nonrelevant_terms={d: docs[d] for d, rel in judged.items() if not rel},
        stats=stats,
        expansion_terms=3,
    )
    return document_features(evidence, stats, docno, docs[docno], minspan[docno])


@settings(max_examples=150, deadline=None)
@given(topics(), st.data())
def test_a_documents_features_never_see_its_own_label_or_nuggets(case, data):
    docs, topic, judged, nuggets, minspan = case
    docno = data.draw(st.sampled_from(sorted(docs)))
    before = _features(docs, topic, judged, nuggets, minspan, docno)
    assert len(before) == len(FEATURE_NAMES)

    flipped = dict(judged)
    flipped[docno] = not judged.get(docno, False)
    assert _features(docs, topic, flipped, nuggets, minspan, docno) == pytest.approx(
        before, rel=1e-12, abs=1e-12
    )
    unjudged = {d: r for d, r in judged.items() if d != docno}
    assert _features(docs, topic, unjudged, nuggets, minspan, docno) == pytest.approx(
        before, rel=1e-12, abs=1e-12
    )
    others = [n for n in nuggets if n.source != docno]
    assert _features(docs, topic, judged, others, minspan, docno) == before


def test_bm25_features_agree_with_the_retrieval_module():
    texts = {
        "a": "wing flow wing pressure",
        "b": "pressure heat transfer",
        "c": "flow flow separation wing",
        "d": "heat flux boundary layer",
        "e": "boundary layer flow",
    }
    analyzer = retrieval.Analyzer(stem=False, stopwords=frozenset())
    index = retrieval.InvertedIndex.build(texts.items(), analyzer)
    terms = {d: analyzer.terms(t) for d, t in texts.items()}
    stats = CorpusStats.from_tokens(terms.values())
    query = index.query("wing flow")
    expected = retrieval.bm25(index, query)
    relevant = ["a", "c"]
    feedback = retrieval.relevance_feedback_bm25(
        index, query, relevant, expansion_terms=100
    )
    evidence = topic_evidence(
        topic_terms=["wing", "flow"],
        nuggets=[
            NuggetText(("wing", "pressure"), "a", "n1"),
            NuggetText(("heat",), None, "n2"),
        ],
        judged={"a": True, "c": True, "b": False},
        relevant_terms={d: terms[d] for d in relevant},
        stats=stats,
        expansion_terms=100,
    )
    n1 = retrieval.bm25(index, {"wing": 1.0, "pressure": 1.0})
    n2 = retrieval.bm25(index, {"heat": 1.0})
    own = document_features(evidence, stats, "a", terms["a"])
    assert own[0] == pytest.approx(n2[index.position["a"]])  # n1 is a's own nugget
    for docno in ("b", "d", "e"):
        row = index.position[docno]
        features = document_features(evidence, stats, docno, terms[docno])
        assert features[1] == pytest.approx(expected[row])
        assert features[0] == pytest.approx((n1[row] + n2[row]) / 2)
        assert features[2] == pytest.approx(feedback[row])
    counts = {t: terms["a"].count(t) for t in set(terms["a"])}
    assert bm25_score(stats, query, counts, len(terms["a"])) == pytest.approx(
        expected[index.position["a"]]
    )


def _random_topics(rng: np.random.Generator, n_topics: int, rows: int):
    out = {}
    for t in range(n_topics):
        x = rng.normal(size=(rows, len(FEATURE_NAMES)))
        x[:, -1] = rng.normal()  # a topic-level feature
        logit = 2 * x[:, 0] + x[:, 2] - 2
        y = (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(int)
        y[rng.random(rows) < 0.7] = -1
        out[f"q{t}"] = (x, y)
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-50, 50))
def test_probabilities_stay_in_unit_interval(seed, shift):
    rng = np.random.default_rng(seed)
    rows = _random_topics(rng, 4, 40)
    for _, y in rows.values():
        y[:2] = [0, 1]
    model = model_fit(rows)
    shifted = {q: x * 1e3 + shift for q, (x, _) in rows.items()}
    for probs in model_predict(model, shifted).values():
        assert np.all((probs >= 0) & (probs <= 1))


def test_model_round_trips_through_json_and_rejects_a_bad_one():
    rng = np.random.default_rng(3)
    rows = _random_topics(rng, 6, 60)
    model = model_fit(rows)
    again = RelevanceModel.from_json(model.to_json())
    assert again == model
    assert json.loads(model.to_json())["feature_names"] == list(FEATURE_NAMES)
    a = model_predict(model, rows)
    b = model_predict(again, {q: x for q, (x, _) in rows.items()})
    for qid in a:
        assert np.array_equal(a[qid], b[qid])
    broken = json.loads(model.to_json())
    broken["coef"] = broken["coef"][:-1]
    with pytest.raises(RelevanceModelError, match="same length"):
        RelevanceModel.from_json(json.dumps(broken))
    missing = json.loads(model.to_json())
    del missing["intercept"]
    with pytest.raises(RelevanceModelError, match="intercept"):
        RelevanceModel.from_json(json.dumps(missing))


def test_fit_needs_both_labels_and_well_shaped_rows():
    x = np.zeros((3, len(FEATURE_NAMES)))
    with pytest.raises(RelevanceModelError, match="relevant and non-relevant"):
        model_fit({"1": (x, np.array([1, 1, -1]))})
    with pytest.raises(RelevanceModelError, match="columns"):
        model_fit({"1": (np.zeros((3, 2)), np.array([1, 0, -1]))})
    with pytest.raises(RelevanceModelError, match="no judged"):
        model_fit({"1": (x, np.array([-1, -1, -1]))})


# --- Real data: MEDLINE -------------------------------------------------------------------


def _medline(shared_data: Path, name: str = "medline"):
    base = shared_data / name
    with gzip.open(base / "docs.jsonl.gz", "rt", encoding="utf-8") as handle:
        texts = {
            row["docno"]: f"{row['title']} {row['text']}".strip()
            for row in map(json.loads, handle)
        }
    topics = {
        row["qid"]: row["description"]
        for row in map(json.loads, (base / "topics.jsonl").read_text().splitlines())
    }
    qrels: dict[str, set[str]] = {}
    for line in (base / "qrels.txt").read_text().splitlines():
        qid, _, docno, rel = line.split()
        if int(rel) > 0:
            qrels.setdefault(qid, set()).add(docno)
    return texts, topics, qrels


def _sampled_rows(shared_data: Path, name: str, share: float, seed: int):
    """Pool = top 100 of BM25 per topic, ``share`` of it judged at random: features
    and labels, pools, judged labels, BM25 with relevance feedback from the judged
    relevant documents, and the unjudged relevant documents per topic."""
    texts, topic_texts, qrels = _medline(shared_data, name)
    terms = {d: normalize(t) for d, t in texts.items()}
    stats = CorpusStats.from_tokens(terms.values())
    index = retrieval.InvertedIndex.build(texts.items())
    rng = random.Random(seed)
    rows, pools, truth_unjudged, baseline, judged_all = {}, {}, {}, {}, {}
    for qid, statement in sorted(topic_texts.items()):
        scores = retrieval.bm25(index, index.query(statement))
        pool = [d for d, _ in retrieval.rank(index, scores, depth=100)]
        judged = {d: d in qrels.get(qid, set()) for d in pool if rng.random() < share}
        relevant = {d: texts[d] for d, rel in judged.items() if rel}
        nuggets = [
            NuggetText(tuple(normalize(n.text)), n.docno)
            for n in nuggets_extract(topic_text=statement, relevant_docs=relevant)
        ]
        evidence = topic_evidence(
            topic_terms=normalize(statement),
            nuggets=nuggets,
            judged=judged,
            relevant_terms={d: terms[d] for d in relevant},
            nonrelevant_terms={d: terms[d] for d, rel in judged.items() if not rel},
            stats=stats,
        )
        x = np.array([document_features(evidence, stats, d, terms[d]) for d in pool])
        rows[qid] = (x, np.array([int(judged[d]) if d in judged else -1 for d in pool]))
        pools[qid] = pool
        judged_all[qid] = judged
        rf = retrieval.relevance_feedback_bm25(
            index, index.query(statement), list(relevant)
        )
        baseline[qid] = {d: rf[index.position[d]] for d in pool}
        truth_unjudged[qid] = {
            d for d in pool if d not in judged and d in qrels.get(qid, set())
        }
    return rows, pools, judged_all, baseline, truth_unjudged


def _unjudged_map(pools, judged_all, truth_unjudged, score_of):
    values = []
    for qid in pools:
        if truth_unjudged[qid]:
            unjudged = [d for d in pools[qid] if d not in judged_all[qid]]
            ranked = sorted(unjudged, key=lambda d: (-score_of(qid, d), d))
            values.append(average_precision(ranked, truth_unjudged[qid]))
    return sum(values) / len(values)


def test_fit_on_medline_is_calibrated_and_ranks_the_unjudged_pool(shared_data):
    """Pool = top 100 of BM25 per topic, 15% judged at random; the model must estimate
    the number of unjudged relevant documents within 20% and rank them at least as well
    as BM25 with relevance feedback from the same judgments."""
    rows, pools, judged_all, baseline, truth_unjudged = _sampled_rows(
        shared_data, "medline", 0.15, 5
    )
    model = model_fit(rows)
    probs = model_predict(model, rows)
    expected = sum(
        p
        for qid in pools
        for d, p in zip(pools[qid], probs[qid], strict=True)
        if d not in judged_all[qid]
    )
    true_count = sum(len(v) for v in truth_unjudged.values())
    assert abs(expected - true_count) <= 0.2 * true_count

    def mean_ap(score_of):
        return _unjudged_map(pools, judged_all, truth_unjudged, score_of)

    position = {q: {d: i for i, d in enumerate(pools[q])} for q in pools}
    model_map = mean_ap(lambda q, d: probs[q][position[q][d]])
    baseline_map = mean_ap(lambda q, d: baseline[q][d])
    assert model_map >= baseline_map - 0.01


def test_with_few_judged_relevant_documents_cross_validation_penalises_more(
    shared_data,
):
    """ADI at a 10% sample leaves one or two judged relevant documents per topic: the
    L2 strength chosen on held-out topics must be stronger than the fixed C = 1, and
    rank the unjudged pool better than it and at least as well as BM25 with relevance
    feedback (means over five samples)."""
    chosen, auto_maps, fixed_maps, baseline_maps = [], [], [], []
    for seed in range(1, 6):
        rows, pools, judged_all, baseline, truth = _sampled_rows(
            shared_data, "adi", 0.10, seed
        )
        auto = model_fit(rows)
        fixed = model_fit(rows, c=1.0)
        chosen.append(auto.c)
        position = {q: {d: i for i, d in enumerate(pools[q])} for q in pools}
        for model, maps in ((auto, auto_maps), (fixed, fixed_maps)):
            probs = model_predict(model, rows)
            maps.append(
                _unjudged_map(
                    pools,
                    judged_all,
                    truth,
                    lambda q, d, p=probs, i=position: p[q][i[q][d]],
                )
            )
        baseline_maps.append(
            _unjudged_map(pools, judged_all, truth, lambda q, d, b=baseline: b[q][d])
        )
    assert float(np.median(chosen)) < 1.0
    assert np.mean(auto_maps) > np.mean(fixed_maps)
    assert np.mean(auto_maps) >= np.mean(baseline_maps) - 0.01


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.1, 1.0, 10.0]))
def test_the_logistic_regression_is_scikit_learns(seed, c):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(300, 4))
    y = (rng.random(300) < 1 / (1 + np.exp(-(x[:, 0] - x[:, 1] - 1)))).astype(int)
    y[:2] = [0, 1]
    w = rng.uniform(0.5, 3.0, size=300)
    coef, intercept = logistic_fit(x, y, w, c)
    reference = LogisticRegression(C=c, tol=1e-10, max_iter=10_000).fit(
        x, y, sample_weight=w
    )
    assert coef == pytest.approx(reference.coef_[0], abs=1e-5)
    assert intercept == pytest.approx(reference.intercept_[0], abs=1e-5)


# --- Anchoring to the sample's Horvitz-Thompson estimate ----------------------------------


def _expected_count(model, rows):
    """Judged labels plus the model's p of the unjudged rows, over every topic."""
    probs = model_predict(model, rows)
    return sum(
        float(np.sum(y > 0)) + float(np.sum(probs[q][y < 0]))
        for q, (_, y) in rows.items()
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 1.0))
def test_anchoring_matches_the_horvitz_thompson_estimate_and_keeps_rankings(
    seed, low_inclusion
):
    rng = np.random.default_rng(seed)
    rows = _random_topics(rng, 5, 50)
    for _, y in rows.values():
        y[:2] = [0, 1]
    inverse = {
        q: 1.0 / rng.uniform(low_inclusion, 1.0, size=len(y))
        for q, (_, y) in rows.items()
    }
    target = horvitz_thompson_relevant({q: y for q, (_, y) in rows.items()}, inverse)
    plain = model_fit(rows, weights=inverse)
    anchored = model_fit(rows, weights=inverse, pool_relevant=target)
    # Only the shift differs: the fit itself is the same.
    assert dataclasses.replace(anchored, shift=0.0) == plain
    judged_relevant = sum(int(np.sum(y > 0)) for _, y in rows.values())
    unjudged = sum(int(np.sum(y < 0)) for _, y in rows.values())
    if judged_relevant < target < judged_relevant + unjudged:
        assert abs(anchored.shift) < SHIFT_BOUND
        assert _expected_count(anchored, rows) == pytest.approx(target, rel=1e-6)
    else:  # out of reach: the shift stops at its bound, on the right side
        assert abs(anchored.shift) == SHIFT_BOUND
        assert (anchored.shift > 0) == (target >= judged_relevant + unjudged)
    before, after = model_logits(plain, rows), model_logits(anchored, rows)
    probs = model_predict(anchored, rows)
    for qid in rows:
        # One shift for every logit: within a topic the ranking cannot change.
        assert after[qid] - before[qid] == pytest.approx(
            np.full(len(before[qid]), anchored.shift), abs=1e-9
        )
        assert np.all((probs[qid] >= 0) & (probs[qid] <= 1))


def test_anchoring_moves_the_total_the_way_the_estimate_asks():
    rng = np.random.default_rng(11)
    rows = _random_topics(rng, 6, 60)
    plain = model_fit(rows)
    expected = _expected_count(plain, rows)
    for factor in (0.8, 1.25):
        model = model_fit(rows, pool_relevant=expected * factor)
        assert (model.shift > 0) == (factor > 1)
        assert _expected_count(model, rows) == pytest.approx(expected * factor)
    again = RelevanceModel.from_json(model.to_json())
    assert again == model
    assert again.shift == model.shift != 0


def test_anchoring_rejects_bad_targets_and_weights():
    labels = {"1": np.array([1, 0, -1])}
    logits = {"1": np.zeros(3)}
    with pytest.raises(RelevanceModelError, match="finite"):
        anchor_shift(logits, labels, float("nan"))
    with pytest.raises(RelevanceModelError, match="topic 1: 3 labels but 2"):
        horvitz_thompson_relevant(labels, {"1": np.ones(2)})
    assert horvitz_thompson_relevant(labels, {"1": np.array([4.0, 2.0, 7.0])}) == 4.0
    assert anchor_shift({"1": np.zeros(2)}, {"1": np.array([1, 0])}, 5.0) == 0.0


def test_anchored_to_a_random_sample_the_adi_pool_total_is_estimated_within_15_percent(
    shared_data,
):
    """ADI, pool = top 100 of BM25, 10% of it judged at random (inclusion 0.1, so the
    Horvitz-Thompson estimate is 10 x the judged relevant): over five samples the
    anchored sum of p over the unjudged documents is within 15% of the true count on
    average, and the ranking of the unjudged documents (MAP) is the unanchored one."""
    ratios, plain_ratios = [], []
    for seed in range(1, 6):
        rows, pools, judged_all, _, truth = _sampled_rows(
            shared_data, "adi", 0.10, seed
        )
        inverse = {q: np.full(len(y), 10.0) for q, (_, y) in rows.items()}
        labels = {q: y for q, (_, y) in rows.items()}
        target = horvitz_thompson_relevant(labels, inverse)
        plain = model_fit(rows)
        anchored = model_fit(rows, pool_relevant=target)
        true_count = sum(len(v) for v in truth.values())
        judged_relevant = sum(int(np.sum(y > 0)) for y in labels.values())
        ratios.append((_expected_count(anchored, rows) - judged_relevant) / true_count)
        plain_ratios.append(
            (_expected_count(plain, rows) - judged_relevant) / true_count
        )
        position = {q: {d: i for i, d in enumerate(pools[q])} for q in pools}
        maps = [
            _unjudged_map(
                pools,
                judged_all,
                truth,
                lambda q, d, p=probs, i=position: p[q][i[q][d]],
            )
            for probs in (model_predict(plain, rows), model_predict(anchored, rows))
        ]
        assert maps[0] == pytest.approx(maps[1])
    assert 0.85 <= np.mean(ratios) <= 1.15, (ratios, plain_ratios)
