"""Learning-to-rank features, SVMlight lines and topic folds on real Cranfield text."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from lab.maths import ltr
from nuggets_app.learning import retrieval

DATA = Path(__file__).resolve().parents[2] / "data" / "public" / "cranfield"


@pytest.fixture(scope="module")
def docs() -> list[tuple[str, str, str]]:
    rows = []
    with gzip.open(DATA / "docs.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            d = json.loads(line)
            rows.append((d["docno"], d.get("title", ""), d["text"]))
            if len(rows) == 300:
                break
    return rows


@pytest.fixture(scope="module")
def query() -> str:
    with (DATA / "topics.jsonl").open(encoding="utf-8") as lines:
        topic = json.loads(next(lines))
    return str(topic.get("title") or topic["description"])


def test_features_are_the_retrieval_models_on_each_field(docs, query):
    indexes = ltr.FieldIndexes.build(docs)
    chosen = [docs[i][0] for i in (5, 0, 120, 299, 42)]
    matrix = ltr.topic_features(
        indexes, query, chosen, [0.1, 0, 0, 0.9, 0.3], [0.2, 0.5, 0, 1, 0]
    )
    assert matrix.shape == (5, len(ltr.FEATURES))
    col = {name: matrix[:, j] for j, name in enumerate(ltr.FEATURE_NAMES)}
    title = retrieval.InvertedIndex.build((d, t) for d, t, _ in docs)
    text = retrieval.InvertedIndex.build((d, x) for d, _, x in docs)
    rows = [text.position[d] for d in chosen]
    q_text, q_title = text.query(query), title.query(query)
    assert q_text, "the query shares terms with the documents"
    np.testing.assert_allclose(col["bm25_text"], retrieval.bm25(text, q_text)[rows])
    np.testing.assert_allclose(col["bm25_title"], retrieval.bm25(title, q_title)[rows])
    np.testing.assert_allclose(
        col["ql_text"], retrieval.ql_dirichlet(text, q_text, mu=2000)[rows]
    )
    np.testing.assert_allclose(
        col["ql_title"], retrieval.ql_dirichlet(title, q_title, mu=100)[rows]
    )
    np.testing.assert_allclose(col["tfidf_text"], retrieval.tfidf(text, q_text)[rows])
    analyzer = retrieval.Analyzer()
    terms = set(analyzer.terms(query)) & (set(text.vocab) | set(title.vocab))
    by_docno = {d: (t, x) for d, t, x in docs}
    for i, docno in enumerate(chosen):
        t, x = by_docno[docno]
        words = set(analyzer.terms(t)) | set(analyzer.terms(x))
        assert col["coverage_text"][i] == pytest.approx(len(terms & words) / len(terms))
        assert col["log_len_text"][i] == pytest.approx(
            math.log1p(len(analyzer.terms(x)))
        )
        assert col["log_len_title"][i] == pytest.approx(
            math.log1p(len(analyzer.terms(t)))
        )
    assert col["matcher_score"].tolist() == [0.1, 0, 0, 0.9, 0.3]
    assert col["model_p"].tolist() == [0.2, 0.5, 0, 1, 0]


def test_unknown_document_and_ragged_inputs_are_refused(docs, query):
    indexes = ltr.FieldIndexes.build(docs[:20])
    with pytest.raises(ltr.LtrError, match="not in the index"):
        ltr.topic_features(indexes, query, ["no-such-doc"], [0], [0])
    with pytest.raises(ltr.LtrError, match="length"):
        ltr.topic_features(indexes, query, [docs[0][0]], [0, 1], [0])


def test_svmlight_lines_load_in_scikit_learn(docs, query, tmp_path):
    indexes = ltr.FieldIndexes.build(docs)
    docnos = [d for d, _, _ in docs[:12]]
    matrix = ltr.topic_features(indexes, query, docnos, [0.0] * 12, [0.5] * 12)
    labels = [i % 3 for i in range(12)]
    qids = [7] * 6 + [12] * 6
    lines = [
        ltr.svmlight_line(rel, q, row.tolist(), f"{d} person")
        for rel, q, row, d in zip(labels, qids, matrix, docnos, strict=True)
    ]
    path = tmp_path / "set.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    x, y, qid = load_svmlight_file(
        str(path), n_features=len(ltr.FEATURES), query_id=True
    )
    assert y.tolist() == labels
    assert qid.tolist() == qids
    np.testing.assert_allclose(x.toarray(), matrix, rtol=1e-5, atol=1e-6)


def test_non_finite_feature_is_refused():
    with pytest.raises(ltr.LtrError, match="not finite"):
        ltr.svmlight_line(1, 1, [0.5, float("nan")])


def test_folds_are_seeded_balanced_and_partition_the_topics():
    qids = [str(q) for q in range(1, 24)]
    folds = ltr.topic_folds(qids, k=5, seed=3)
    assert folds == ltr.topic_folds(list(reversed(qids)), k=5, seed=3)
    assert set(folds) == set(qids)
    sizes = [list(folds.values()).count(k) for k in range(1, 6)]
    assert max(sizes) - min(sizes) <= 1
    assert sum(sizes) == 23
    assert folds != ltr.topic_folds(qids, k=5, seed=4)
    with pytest.raises(ltr.LtrError, match="cannot fill"):
        ltr.topic_folds(["1", "2"], k=5)


def test_numeric_qids_keep_integers_else_number_in_order():
    assert ltr.numeric_qids(["10", "2"]) == {"10": 10, "2": 2}
    assert ltr.numeric_qids(["b", "10", "a"]) == {"10": 1, "a": 2, "b": 3}


def test_features_file_numbers_every_feature():
    lines = ltr.features_description().splitlines()
    assert [line.split("\t")[:2] for line in lines] == [
        [str(j), name] for j, name in enumerate(ltr.FEATURE_NAMES, 1)
    ]
