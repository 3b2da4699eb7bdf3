"""statAP over many statAP samples of real Cranfield pools (issue 2's unbiasedness check).

With a fixed number of draws K (exact inclusion probabilities), the Horvitz-Thompson
estimate ``R̂ = Σ 1/π`` of the number of relevant pool documents is unbiased, and the
statAP numerator ``UP = Σ_{sampled relevant i} prec_i/π_i`` has the expectation the
sampling design gives, ``Σ_i (1/r_i)(1 + Σ_{j above i} π_ij/(π_i π_j))`` with the
with-replacement joint inclusion ``π_ij = 1 - (1-p_i)^K - (1-p_j)^K + (1-p_i-p_j)^K``.
statAP itself is their ratio, unbiased only as the sample grows (the ratio of two
unbiased estimates is not unbiased); its mean is reported, not asserted equal to AP.
Tolerance: 4 standard errors of the mean over the repetitions.
"""

import gzip
import math
import random
import statistics

import pytest

from nuggets_app.ir.prels import PrelsRecord, prels_load, ranking_order
from nuggets_app.ir.sampling import draw_statap, pool_distribution
from nuggets_app.ir.statap import statap_evaluate

REPETITIONS = 1500
DRAWS = 40
DEPTH = 100
TOPICS = ["1", "2", "23"]


@pytest.fixture(scope="module")
def cranfield():
    from tests.conftest import SHARED_DATA

    folder = SHARED_DATA / "cranfield"
    qrels: dict[str, set[str]] = {}
    for line in (folder / "qrels.txt").read_text().splitlines():
        qid, _iter, docno, rel = line.split()
        if int(rel) >= 1:
            qrels.setdefault(qid, set()).add(docno)
    runs = {}
    for path in sorted((folder / "runs").glob("*.run.gz"))[:12]:
        scores: dict[str, dict[str, float]] = {}
        with gzip.open(path, "rt") as handle:
            for line in handle:
                qid, _q0, docno, _rank, score, _tag = line.split()
                scores.setdefault(qid, {})[docno] = float(score)
        runs[path.name] = {q: ranking_order(s)[:DEPTH] for q, s in scores.items()}
    return qrels, runs


def repeated_estimates(p, relevant, ranking, qid, seed):
    """(R̂, UP) of the ranking over REPETITIONS samples of K draws."""
    rng = random.Random(seed)
    run = {qid: {d: float(len(ranking) - k) for k, d in enumerate(ranking)}}
    estimates = []
    for _ in range(REPETITIONS):
        draw = draw_statap(p, DRAWS, rng, stop="draws")
        records = [
            PrelsRecord(i, qid, d, int(d in relevant), 1, draw.inclusion[d])
            for i, d in enumerate(draw.order, 1)
        ]
        topic = statap_evaluate(prels_load(records), run).topics[0]
        estimates.append(
            (topic.est_r, topic.statap * topic.est_r if topic.valid else 0.0)
        )
    return estimates


def within_four_standard_errors(values, expected):
    mean = statistics.fmean(values)
    error = statistics.stdev(values) / math.sqrt(len(values))
    assert abs(mean - expected) <= 4 * error, (mean, expected, error)


@pytest.mark.parametrize("qid", TOPICS)
def test_estimates_have_the_expectation_of_the_sampling_design(cranfield, qid):
    qrels, runs = cranfield
    p = pool_distribution({name: r[qid] for name, r in runs.items() if qid in r})
    relevant = qrels[qid] & set(p)
    ranking = runs[sorted(runs)[3]][qid]
    estimates = repeated_estimates(p, relevant, ranking, qid, seed=int(qid))

    within_four_standard_errors([r for r, _ in estimates], len(relevant))

    pi = {d: -math.expm1(DRAWS * math.log1p(-p[d])) for d in p}

    def joint(a: str, b: str) -> float:
        return (
            1 - (1 - p[a]) ** DRAWS - (1 - p[b]) ** DRAWS + (1 - p[a] - p[b]) ** DRAWS
        )

    found = [d for d in ranking if d in relevant]
    expected_up = sum(
        (1 + sum(joint(d, e) / (pi[d] * pi[e]) for e in found[:i]))
        / (ranking.index(d) + 1)
        for i, d in enumerate(found)
    )
    within_four_standard_errors([up for _, up in estimates], expected_up)
