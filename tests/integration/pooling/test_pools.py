"""pool_build and pool_summary on PostgreSQL: the specification vectors and Cranfield.

Expected values come from docs/reference/algorithms.md 1.5, or are computed here from the run files
themselves (set unions, exact fractions), independently of the code under test.
"""

from __future__ import annotations

import gzip
import json
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from nuggets_app.models import (
    Collection,
    Document,
    Pool,
    PoolDocument,
    Run,
    RunEntry,
    Topic,
)
from nuggets_app.pooling.services.pools import PoolError, pool_build, pool_summary
from tests.factories import (
    CollectionFactory,
    DocumentFactory,
    RunFactory,
    SampleFactory,
    TopicFactory,
)
from tests.helpers import read_run

pytestmark = pytest.mark.django_db
TOL = 1e-9
# docs/reference/algorithms.md 1.5: run1 = a b c d, run2 = c a e.
SPEC_P = {"a": 199 / 576, "b": 25 / 192, "c": 193 / 576, "d": 5 / 64, "e": 1 / 9}


def make_runs(
    rankings: dict[str, dict[str, list[str]]],
) -> tuple[Collection, list[Run]]:
    """A collection whose runs rank the given docnos, per qid, best first."""
    collection = CollectionFactory()
    docnos = sorted(
        {d for per_run in rankings.values() for r in per_run.values() for d in r}
    )
    documents = {d: DocumentFactory(collection=collection, docno=d) for d in docnos}
    runs: dict[str, Run] = {}
    for qid, per_run in rankings.items():
        topic = TopicFactory(collection=collection, qid=qid)
        for name, ranking in per_run.items():
            run = runs.get(name) or RunFactory(collection=collection, name=name)
            runs[name] = run
            RunEntry.objects.bulk_create(
                RunEntry(run=run, topic=topic, document=documents[d], rank=i, score=-i)
                for i, d in enumerate(ranking, start=1)
            )
    return collection, list(runs.values())


def priors(pool) -> dict[tuple[str, str], PoolDocument]:
    rows = PoolDocument.objects.filter(pool=pool).select_related("topic", "document")
    return {(row.topic.qid, row.document.docno): row for row in rows}


def test_pool_priors_match_the_specification_vectors():
    collection, runs = make_runs({"7": {"run1": list("abcd"), "run2": list("cae")}})
    pool = pool_build(collection=collection, runs=runs, depth=10, name="spec")
    rows = priors(pool)
    assert {docno for _, docno in rows} == set(SPEC_P)
    for docno, prob in SPEC_P.items():
        assert rows["7", docno].prior == pytest.approx(prob, abs=TOL)
    assert rows["7", "a"].best_rank == 1
    assert rows["7", "a"].num_runs == 2
    assert (rows["7", "e"].best_rank, rows["7", "e"].num_runs) == (3, 1)


def test_the_depth_cut_uses_each_runs_own_length():
    collection, runs = make_runs({"1": {"long": list("abcdef"), "short": list("ba")}})
    pool = pool_build(collection=collection, runs=runs, depth=3, name="cut")
    rows = priors(pool)
    assert sorted(docno for _, docno in rows) == ["a", "b", "c"]
    # long cut at 3 -> w_3 = 17/36, 11/36, 2/9; short has Z = 2 -> w_2 = 5/8, 3/8.
    assert rows["1", "a"].prior == pytest.approx((17 / 36 + 3 / 8) / 2, abs=TOL)
    assert rows["1", "b"].prior == pytest.approx((11 / 36 + 5 / 8) / 2, abs=TOL)


def test_a_topic_a_run_does_not_answer_leaves_that_run_out_of_s():
    collection, runs = make_runs(
        {"1": {"r1": list("abcd"), "r2": list("cae")}, "2": {"r1": list("xy")}}
    )
    rows = priors(pool_build(collection=collection, runs=runs, depth=5, name="s"))
    assert rows["2", "x"].prior == pytest.approx(5 / 8, abs=TOL)  # S = 1, not 2
    assert rows["1", "c"].prior == pytest.approx(193 / 576, abs=TOL)


def test_rebuilding_a_pool_of_the_same_name_is_idempotent():
    collection, runs = make_runs({"1": {"r1": list("abcd"), "r2": list("cae")}})
    pool = pool_build(collection=collection, runs=runs, depth=10, name="again")
    before = sorted(PoolDocument.objects.filter(pool=pool).values_list("pk", "prior"))
    same = pool_build(
        collection=collection, runs=reversed(runs), depth=10, name="again"
    )
    assert same.pk == pool.pk
    assert (
        sorted(PoolDocument.objects.filter(pool=pool).values_list("pk", "prior"))
        == before
    )
    deeper = pool_build(collection=collection, runs=runs[:1], depth=2, name="again")
    assert deeper.pk == pool.pk
    assert sorted(docno for _, docno in priors(deeper)) == ["a", "b"]


def test_a_pool_of_some_topics_holds_only_them_and_is_rebuilt_for_others():
    collection, runs = make_runs(
        {"1": {"r1": list("abcd"), "r2": list("cae")}, "2": {"r1": list("xy")}}
    )
    pool = pool_build(collection=collection, runs=runs, depth=5, name="t", topics=["2"])
    assert sorted(priors(pool)) == [("2", "x"), ("2", "y")]
    # The topic's priors are those of a pool of every topic: topics are independent.
    assert priors(pool)["2", "x"].prior == pytest.approx(5 / 8, abs=TOL)
    every = pool_build(collection=collection, runs=runs, depth=5, name="t")
    assert every.pk == pool.pk
    assert {qid for qid, _ in priors(every)} == {"1", "2"}
    SampleFactory(pool=every)
    with pytest.raises(PoolError, match="its runs or topics"):
        pool_build(collection=collection, runs=runs, depth=5, name="t", topics=["1"])
    Topic.objects.create(collection=collection, qid="3", title="unanswered")
    with pytest.raises(PoolError, match="for the topics asked"):
        pool_build(collection=collection, runs=runs, depth=5, name="u", topics=["3"])
    with pytest.raises(PoolError, match=r"unknown topics in collection .*: 9, 8$"):
        pool_build(
            collection=collection, runs=runs, depth=5, name="u", topics=["2", "9", "8"]
        )
    assert not Pool.objects.filter(name="u").exists()


def test_a_pool_with_samples_is_not_redefined():
    collection, runs = make_runs({"1": {"r1": list("abcd"), "r2": list("cae")}})
    pool = pool_build(collection=collection, runs=runs, depth=10, name="used")
    SampleFactory(pool=pool)
    with pytest.raises(PoolError, match="pool used has samples"):
        pool_build(collection=collection, runs=runs, depth=3, name="used")
    assert PoolDocument.objects.filter(pool=pool).count() == 5


def test_bad_requests_are_refused_and_nothing_is_saved():
    collection, runs = make_runs({"1": {"r1": list("ab")}})
    other = RunFactory()
    with pytest.raises(PoolError, match=f"runs not in collection {collection.name}"):
        pool_build(collection=collection, runs=[*runs, other], depth=5, name="x")
    with pytest.raises(PoolError, match="depth must be at least 1"):
        pool_build(collection=collection, runs=runs, depth=0, name="x")
    empty = RunFactory(collection=collection)
    with pytest.raises(PoolError, match="no entries"):
        pool_build(collection=collection, runs=[empty], depth=5, name="x")
    assert not collection.pools.exists()


# --- Cranfield: 36 real runs, depth 100 -----------------------------------------------


@cache
def cranfield_rankings(folder: Path) -> dict[str, dict[str, list[str]]]:
    """qid -> run -> docnos in trec_eval order (score descending, docno descending)."""
    per_topic: dict[str, dict[str, list[tuple[float, str]]]] = {}
    for path in sorted((folder / "runs").glob("*.run.gz")):
        for qid, docno, _, score, tag in read_run(path):
            per_topic.setdefault(qid, {}).setdefault(tag, []).append((score, docno))
    return {
        qid: {
            tag: [docno for _, docno in sorted(entries, reverse=True)]
            for tag, entries in runs.items()
        }
        for qid, runs in per_topic.items()
    }


def load_cranfield(shared_data: Path, qids: list[str]) -> tuple[Collection, list[Run]]:
    """Cranfield documents, the chosen topics and all 36 runs' entries for them."""
    folder = shared_data / "cranfield"
    collection = Collection.objects.create(name="cranfield")
    with gzip.open(folder / "docs.jsonl.gz", "rt") as lines:
        records = [json.loads(line) for line in lines]
    Document.objects.bulk_create(
        Document(
            collection=collection, docno=r["docno"], title=r["title"], text=r["text"]
        )
        for r in records
    )
    documents = dict(collection.documents.values_list("docno", "pk"))
    with open(folder / "topics.jsonl") as lines:
        wanted = [json.loads(line) for line in lines]
    topics = {
        t["qid"]: Topic.objects.create(
            collection=collection, qid=t["qid"], title=t["title"]
        )
        for t in wanted
        if t["qid"] in qids
    }
    rankings = cranfield_rankings(folder)
    names = sorted({tag for qid in rankings for tag in rankings[qid]})
    runs = {
        name: Run.objects.create(collection=collection, name=name) for name in names
    }
    RunEntry.objects.bulk_create(
        (
            RunEntry(
                run=runs[tag],
                topic=topics[qid],
                document_id=documents[docno],
                rank=rank,
                score=-rank,
            )
            for qid in qids
            for tag, ranking in rankings[qid].items()
            for rank, docno in enumerate(ranking, start=1)
        ),
        batch_size=5000,
    )
    return collection, list(runs.values())


def exact_prior(per_run: dict[str, list[str]], docno: str) -> Fraction:
    """p(d) from exact fractions, straight from docs/reference/algorithms.md 1.1-1.2."""
    total = Fraction(0)
    for ranking in per_run.values():
        size = len(ranking)
        if docno in ranking:
            rank = ranking.index(docno) + 1
            tail = sum(Fraction(1, j) for j in range(rank, size + 1))
            total += (1 + tail) / (2 * size)
    return total / len(per_run)


CRANFIELD_QIDS = [str(q) for q in range(1, 41)]


def test_a_depth_100_pool_of_the_cranfield_runs(shared_data):
    collection, runs = load_cranfield(shared_data, CRANFIELD_QIDS)
    assert len(runs) == 36
    pool = pool_build(collection=collection, runs=runs, depth=100, name="cran-100")
    summary = pool_summary(pool)
    rankings = cranfield_rankings(shared_data / "cranfield")
    assert [t.qid for t in summary.topics] == CRANFIELD_QIDS
    assert summary.runs == 36
    for topic in summary.topics:
        per_run = rankings[topic.qid]
        union = {docno for ranking in per_run.values() for docno in ranking}
        counts: dict[str, int] = {}
        for ranking in per_run.values():
            for docno in ranking:
                counts[docno] = counts.get(docno, 0) + 1
        assert topic.size == len(union)
        assert topic.single_run == sum(1 for c in counts.values() if c == 1)
    rows = priors(pool)
    for qid in ("1", "23"):
        topic_rows = {d: row for (q, d), row in rows.items() if q == qid}
        assert sum(row.prior for row in topic_rows.values()) == pytest.approx(
            1.0, abs=1e-12
        )
        for docno in sorted(topic_rows)[:40]:
            expected = exact_prior(rankings[qid], docno)
            assert topic_rows[docno].prior == pytest.approx(float(expected), abs=1e-12)
            best = min(r.index(docno) + 1 for r in rankings[qid].values() if docno in r)
            assert topic_rows[docno].best_rank == best
