"""The ratio's bias estimated by thinning the sample (a jackknife over the design).

Keeping each drawn document independently with probability F turns a sample of the
design π into a sample of the design Fπ (exactly so for Poisson sampling, closely for
K draws with replacement when π is small), whose weights ``1/(Fπ)`` the estimator
uses. The thinned sample is a genuine sample of the whole pool, not of the drawn
documents as a bootstrap's plug-in population would be, so the mean of the estimate
over many thinnings is the estimator's expectation at the smaller design, bias
included. Where the bias is ``b/n`` (the ratio's second-order term: R̂'s variance),
Richardson's extrapolation

    θ̂_J = (θ̂ - F θ̄_F) / (1 - F)

cancels it: F = 1/2 gives ``2 θ̂ - θ̄_{1/2}``. Unlike Beale's plug-in expansion it
corrects the estimator the application reports as it is, with R̂'s floor and the
[0, 1] bounds, so the correction follows the bounded estimate's own bias.

Used by ``estimator_bias`` (``thin:F``, ``thins:M``). Measured and not adopted: the
bias of the reported estimator is not ``b/n`` (docs/results/intervals.md, "A jackknife
over the design"). No Django here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from nuggets_app.ir.prels import TopicPrels


def thinned(
    prels: Mapping[str, TopicPrels], rho: float, rng: np.random.Generator
) -> dict[str, TopicPrels]:
    """Every topic's sample thinned: each drawn document (π > 0) kept with probability
    ``rho`` and given π' = ``rho`` π; judged documents outside the design (π = 0)
    stay."""
    out = {}
    for qid, topic in prels.items():
        rel, pis, kept = {}, {}, 0
        for docno, grade in topic.rel.items():
            pi = topic.inclusion_prob.get(docno, 0.0)
            if pi > 0:
                if rng.random() >= rho:
                    continue
                kept += 1
                pi = rho * pi
            rel[docno], pis[docno] = grade, pi
        out[qid] = replace(
            topic,
            rel=rel,
            inclusion_prob=pis,
            neu=kept if topic.neu else 0,
            n_sampled=kept,
            var_weight={},
        )
    return out


def extrapolated(full: float, thinned_mean: float, rho: float) -> float:
    """Richardson's extrapolation of an estimate whose bias is proportional to 1/n."""
    return (full - rho * thinned_mean) / (1.0 - rho)
