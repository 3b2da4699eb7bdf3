"""sample_draw, sample_extend and sample_inclusion on PostgreSQL.

Expected values come from docs/reference/algorithms.md 1.5 (p and pi), from the pi formula applied to
the stored K, from the run files, or from the binomial law.
"""

from __future__ import annotations

import math

import pytest

from nuggets_app.models import PoolDocument, Sample, SampleDocument
from nuggets_app.pooling.selectors import sample_design
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import (
    SampleError,
    sample_draw,
    sample_extend,
    sample_inclusion,
)
from tests.integration.pooling.test_pools import (
    SPEC_P,
    cranfield_rankings,
    load_cranfield,
    make_runs,
)

pytestmark = pytest.mark.django_db
TOL = 1e-9
SIGMAS = 4.5


@pytest.fixture
def spec_pool():
    """Two topics: the specification's runs, and a longer list for larger samples."""
    collection, runs = make_runs(
        {
            "1": {"run1": list("abcd"), "run2": list("cae")},
            "2": {
                "run1": list("fghijklmnopq"),
                "run2": list("qponmlkjihgf"),
                "run3": [],
            },
        }
    )
    return pool_build(collection=collection, runs=runs, depth=20, name="spec")


def rows(sample: Sample) -> dict[str, list[tuple[str, float]]]:
    """qid -> [(docno, inclusion_prob)] in queue order."""
    out: dict[str, list[tuple[str, float]]] = {}
    for row in SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    ):
        out.setdefault(row.topic.qid, []).append(
            (row.document.docno, row.inclusion_prob)
        )
    return out


def stored_orders(sample: Sample) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for qid, order in SampleDocument.objects.filter(sample=sample).values_list(
        "topic__qid", "order"
    ):
        out.setdefault(qid, []).append(order)
    return out


def pi(prob: float, draws: int) -> float:
    """docs/reference/algorithms.md 1.3."""
    return 1 - (1 - prob) ** draws


def test_a_statap_sample_stores_pi_from_k_and_the_pool_priors(spec_pool):
    sample = sample_draw(pool=spec_pool, size=3, method="statap", seed=5, name="s")
    drawn = rows(sample)
    assert [len(drawn["1"]), len(drawn["2"])] == [3, 3]
    assert stored_orders(sample) == {"1": [1, 2, 3], "2": [1, 2, 3]}
    draws = sample.draws["1"]["draws"]
    assert draws >= 3
    assert sample.draws["1"]["pool_size"] == 5
    assert sample.draws["1"]["pi"] == "stop-rule-ignored"
    for docno, prob in drawn["1"]:
        assert prob == pytest.approx(pi(SPEC_P[docno], draws), abs=TOL)


def test_the_design_gives_pi_of_every_pooled_document_drawn_or_not(spec_pool):
    """statAP: 1 - (1 - p)^K for every pooled document from the stored K and the
    specification's p; uniform: distinct / pool size; depth: the drawn ones only."""
    sample = sample_draw(pool=spec_pool, size=3, method="statap", seed=5, name="s")
    design = sample_design(sample=sample)
    draws = sample.draws["1"]["draws"]
    assert set(design["1"]) == set(SPEC_P)
    for docno, prob in SPEC_P.items():
        assert design["1"][docno] == pytest.approx(pi(prob, draws), abs=TOL)
    assert len(design["2"]) == 12 > len(rows(sample)["2"])
    uniform = sample_draw(pool=spec_pool, size=3, method="uniform", seed=5, name="u")
    assert sample_design(sample=uniform)["1"] == dict.fromkeys(SPEC_P, 3 / 5)
    depth = sample_draw(pool=spec_pool, size=2, method="depth", seed=5, name="d")
    assert sample_design(sample=depth) == {
        qid: dict(found) for qid, found in rows(depth).items()
    }


def test_a_sample_is_reproducible_for_a_seed(spec_pool):
    first = sample_draw(pool=spec_pool, size=4, method="statap", seed=11, name="a")
    again = sample_draw(pool=spec_pool, size=4, method="statap", seed=11, name="b")
    assert rows(first) == rows(again)
    assert first.draws == again.draws
    others = [
        rows(sample_draw(pool=spec_pool, size=4, method="statap", seed=s, name=f"o{s}"))
        for s in range(12, 20)
    ]
    assert any(other != rows(first) for other in others)


def test_drawing_again_under_a_name_is_idempotent_or_refused(spec_pool):
    first = sample_draw(pool=spec_pool, size=2, method="statap", seed=1, name="n")
    again = sample_draw(pool=spec_pool, size=2, method="statap", seed=1, name="n")
    assert again.pk == first.pk
    assert SampleDocument.objects.filter(sample=first).count() == 4
    with pytest.raises(SampleError, match="sample n of pool spec exists"):
        sample_draw(pool=spec_pool, size=3, method="statap", seed=1, name="n")


def test_bad_requests_are_refused(spec_pool):
    with pytest.raises(SampleError, match="unknown method 'random'"):
        sample_draw(pool=spec_pool, size=2, method="random", seed=1, name="x")
    with pytest.raises(SampleError, match="size must be at least 1"):
        sample_draw(pool=spec_pool, size=0, method="statap", seed=1, name="x")
    with pytest.raises(SampleError, match="statap method only"):
        sample_draw(
            pool=spec_pool,
            size=2,
            method="uniform",
            seed=1,
            name="x",
            per_run_quota=True,
        )
    assert not Sample.objects.filter(name="x").exists()


def test_a_size_at_least_the_pool_judges_the_whole_topic(spec_pool):
    sample = sample_draw(pool=spec_pool, size=5, method="statap", seed=1, name="all")
    drawn = rows(sample)
    assert sorted(docno for docno, _ in drawn["1"]) == list("abcde")
    assert {prob for _, prob in drawn["1"]} == {1.0}
    assert [docno for docno, _ in drawn["1"]][:2] == ["a", "c"]  # likeliest first
    assert len(drawn["2"]) == 5


def test_uniform_and_depth_samples(spec_pool):
    uniform = rows(
        sample_draw(pool=spec_pool, size=3, method="uniform", seed=2, name="u")
    )
    assert {prob for _, prob in uniform["1"]} == {3 / 5}
    assert {prob for _, prob in uniform["2"]} == {3 / 12}
    depth = rows(sample_draw(pool=spec_pool, size=3, method="depth", seed=2, name="d"))
    # Best ranks 1: a, c (a has the higher p); then b (rank 2, p 25/192 > e's 1/9).
    assert depth["1"] == [("a", 1.0), ("c", 1.0), ("b", 1.0)]
    assert [docno for docno, _ in depth["2"]] == ["f", "q", "g"]


def test_extending_a_sample_keeps_its_queue_and_recomputes_every_pi(spec_pool):
    sample = sample_draw(pool=spec_pool, size=3, method="statap", seed=8, name="x")
    before = rows(sample)
    sample = sample_extend(sample=sample, extra=4)
    after = rows(sample)
    fresh = rows(sample_draw(pool=spec_pool, size=7, method="statap", seed=8, name="y"))
    assert sample.size == 7
    assert [d for d, _ in after["2"][:3]] == [d for d, _ in before["2"]]
    assert after["2"] == fresh["2"]
    priors = dict(
        PoolDocument.objects.filter(pool=spec_pool, topic__qid="2").values_list(
            "document__docno", "prior"
        )
    )
    draws = sample.draws["2"]["draws"]
    for docno, prob in after["2"]:
        assert prob == pytest.approx(pi(priors[docno], draws), abs=TOL)
    # Topic 1 has 5 documents: 7 judges all of them, pi = 1, old queue kept first.
    assert [d for d, _ in after["1"][:3]] == [d for d, _ in before["1"]]
    assert sorted(d for d, _ in after["1"]) == list("abcde")
    assert stored_orders(sample)["1"] == [1, 2, 3, 4, 5]


def test_sample_inclusion_maps_qid_and_docno_to_pi(spec_pool):
    sample = sample_draw(pool=spec_pool, size=2, method="uniform", seed=3, name="p")
    inclusion = sample_inclusion(sample)
    assert len(inclusion) == 4
    assert {prob for (qid, _), prob in inclusion.items() if qid == "1"} == {2 / 5}


def test_a_per_run_quota_sample_gives_every_run_its_share(spec_pool):
    sample = sample_draw(
        pool=spec_pool, size=6, method="statap", seed=4, name="q", per_run_quota=True
    )
    record = sample.draws["2"]
    assert set(record["run_draws"]) == {"run1", "run2"}  # run3 has no documents
    judged = {docno for docno, _ in rows(sample)["2"]}
    assert len(judged) == 6
    # run1 ranks f..q, run2 q..f: each holds at least 3 of its own top documents.
    assert len(judged & set("fghijk")) + len(judged & set("qponml")) == 6


def test_a_statap_sample_of_the_cranfield_pool(shared_data):
    qids = [str(q) for q in range(1, 21)]
    collection, runs = load_cranfield(shared_data, qids)
    pool = pool_build(collection=collection, runs=runs, depth=100, name="cran")
    sample = sample_draw(pool=pool, size=15, method="statap", seed=2024, name="cran-15")
    drawn = rows(sample)
    rankings = cranfield_rankings(shared_data / "cranfield")
    assert sorted(drawn, key=int) == qids
    priors = {
        (qid, docno): prior
        for qid, docno, prior in PoolDocument.objects.filter(pool=pool).values_list(
            "topic__qid", "document__docno", "prior"
        )
    }
    for qid, queue in drawn.items():
        union = {d for ranking in rankings[qid].values() for d in ranking}
        assert len(queue) == len({d for d, _ in queue}) == 15
        assert {d for d, _ in queue} <= union
        draws = sample.draws[qid]["draws"]
        for docno, prob in queue:
            assert prob == pytest.approx(pi(priors[qid, docno], draws), abs=TOL)
    again = sample_draw(pool=pool, size=15, method="statap", seed=2024, name="again")
    assert rows(again) == drawn


def test_empirical_inclusion_frequencies_match_the_stored_pi(shared_data):
    """300 seeds on Cranfield topic 1 (a real 36-run pool).

    Uniform: stored pi is exact, so every frequency is within 4.5 binomial standard
    errors. statAP stopping at n distinct: the stored pi uses the realised K; the true
    pi lies between the values for the smallest and largest K seen (the sample lies
    between the first K_min and the first K_max draws), widened by 4.5 standard errors.
    """
    collection, runs = load_cranfield(shared_data, ["1"])
    pool = pool_build(collection=collection, runs=runs, depth=100, name="one")
    priors = dict(
        PoolDocument.objects.filter(pool=pool).values_list("document__docno", "prior")
    )
    trials = 300
    counts = {"statap": dict.fromkeys(priors, 0), "uniform": dict.fromkeys(priors, 0)}
    draws = []
    for seed in range(trials):
        for method in counts:
            sample = sample_draw(
                pool=pool, size=10, method=method, seed=seed, name=f"{method}{seed}"
            )
            for docno, _ in rows(sample)["1"]:
                counts[method][docno] += 1
            if method == "statap":
                draws.append(sample.draws["1"]["draws"])
    for docno, count in counts["uniform"].items():
        expected = 10 / len(priors)
        assert abs(count / trials - expected) <= SIGMAS * math.sqrt(
            expected * (1 - expected) / trials
        ), docno
    for docno, count in counts["statap"].items():
        low, high = pi(priors[docno], min(draws)), pi(priors[docno], max(draws))
        slack = SIGMAS * math.sqrt(max(high * (1 - low), 1 / trials) / trials)
        assert low - slack <= count / trials <= high + slack, docno


def test_verification_is_not_a_method_the_pool_sampler_draws(db):
    from nuggets_app.pooling.services.samples import (
        SampleError,
        sample_draw,
        sample_extend,
    )
    from tests.factories import PoolFactory, SampleFactory

    pool = PoolFactory()
    with pytest.raises(SampleError, match="unknown method 'verification'"):
        sample_draw(pool=pool, size=3, method="verification", seed=1, name="v")
    verification = SampleFactory(pool=pool, method="verification")
    with pytest.raises(SampleError, match="is a verification sample"):
        sample_extend(sample=verification, extra=1)
