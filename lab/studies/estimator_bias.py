"""Where the default estimate's shift common to all runs comes from, and what removes it.

Reads the ``inputs.pickle`` of :mod:`lab.studies.simulate_dump` (one simulation: the
sample's prels, the job's cross-fitted p, the design, the runs, the truth) and, for
option sets given as ``NAME=key:value,...`` (the estimator's options, read by
:func:`lab.maths.estimators.estimator_parse` into a value of the product's
:class:`~nuggets_app.ir.estimator.Estimator`, and the study's own, :class:`Spec`):

* ``observed``: per option set, on the simulation's own sample, the mean over runs of
  (MAP estimate - pooled truth), its sd, the RMSE, coverage, mean half-width, tau and
  the part of the shift that comes from topics whose R̂ was floored;
* ``redraw:N[:F]``: the same options on N fresh samples of the same design with the
  same (fixed) p (with F: F times as many draws per topic, π recomputed), i.e. the
  estimator's own bias given the model, without the dependence of p on the sample
  (the mean over draws of the per-draw mean error over runs), with the spread of the
  per-draw shift, the share of draws whose shift is within ±0.02 and
  ``sd-ratio`` (the estimated sd over the sd the estimates have over the draws) and
  ``topic-var-ratio`` (the same per topic, as variances summed over runs and topics,
  and over the thin topics alone: :func:`topic_var_ratio`);
* ``visible``: what a sample can see of R (no options): per band of π, the pooled
  documents, the relevant ones, how many of them a sample draws in expectation (Σ π)
  and drew, the model's Σ p, and the band's share of R̂'s variance Σ (1 - π)/π (y - p)².

Option ``pboot:B`` (with ``world:cal|topic|raw|truth``): the estimate minus the bias
:mod:`lab.studies.simulated_bias` finds in B simulated worlds (measured, not adopted).
Option ``allow:toward|both``: the interval stretched by how far Beale's correction moved
each run's estimate, towards the uncorrected ratio or both ways (measured, not adopted).
Option ``thin:F`` (with ``thins:M``): each topic's AP extrapolated from M thinnings
of the sample (:mod:`lab.studies.thinned_jackknife`; measured, not adopted).
Option ``linear:model|floor|calibrated|both``: each topic's AP linearised as a whole ratio around
the model's own (N_p, R_p) (:mod:`lab.maths.ratio_linearised`; measured, not adopted); with ``topicclip:false`` only
the run's mean is kept in [0, 1].
Option ``synthetic:T``: the documents with π < T predicted by the model calibrated on
the other topics' samples (:mod:`lab.studies.synthetic_band`; measured, not adopted).

Usage: python -m lab.studies.estimator_bias observed|table|redraw[:N[:F]]|visible INPUTS...
       -- OPTIONS...
"""

from __future__ import annotations

import math
import pickle
import sys
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import pairwise
from statistics import NormalDist

import numpy as np

from lab.maths.estimators import estimator_parse
from lab.maths.ratio_linearised import linearised_runs
from lab.studies.simulated_bias import draws_infer, simulated_bias
from lab.studies.synthetic_band import common_variance, synthetic_band
from lab.studies.thinned_jackknife import extrapolated, thinned
from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.intervals import THIN_BELOW
from nuggets_app.ir.measures import average_precision
from nuggets_app.ir.model_assisted import model_assisted_evaluate, topic_samples
from nuggets_app.ir.prels import TopicPrels, ranking_order
from nuggets_app.ir.ranking import kendall_tau
from nuggets_app.ir.run_intervals import Z_95, interval95


def pooled_truth(inputs: Mapping) -> dict[str, dict[str, float]]:
    level = inputs["level"]
    relevant = {
        q: {d for d in docs if inputs["truth"].get(q, {}).get(d, 0) >= level}
        for q, docs in inputs["pool"].items()
    }
    return {
        r: {q: average_precision(ranking_order(d), relevant[q]) for q, d in run.items()}
        for r, run in inputs["runs"].items()
    }


ESTIMATOR_KEYS = ("beale", "bounded", "interval", "tune", "lam")


@dataclass(frozen=True)
class Spec:
    """One option set: the estimator, and what the study adds around it (module
    docstring): ``zero`` (p ≡ 0), ``pboot``/``world``, ``synthetic``, ``allow``,
    ``thin``/``thins``."""

    estimator: Estimator = REPORTED
    zero: bool = False
    pboot: int = 0
    world: str = "cal"
    synthetic: float = 0.0
    allow: str | None = None
    thin: float = 0.0
    thins: int = 20
    linear: str = ""
    topicclip: bool = True


SPEC_KEYS = (
    "zero",
    "pboot",
    "world",
    "synthetic",
    "allow",
    "thin",
    "thins",
    "linear",
    "topicclip",
)


def options_parse(text: str) -> tuple[str, Spec]:
    """``NAME=key:value,...``: the reported estimator with those options, and the
    study's own."""
    name, _, rest = text.partition("=")
    given = dict(item.partition(":")[::2] for item in filter(None, rest.split(",")))
    own = {k: v for k, v in given.items() if k not in ESTIMATOR_KEYS}
    unknown = set(own) - set(SPEC_KEYS)
    if unknown:
        raise SystemExit(f"{name}: unknown options {', '.join(sorted(unknown))}")
    return name, Spec(
        estimator=estimator_parse(given),
        zero=own.get("zero") == "true",
        pboot=int(own.get("pboot", 0)),
        world=own.get("world", "cal"),
        synthetic=float(own.get("synthetic", 0)),
        allow=own.get("allow"),
        thin=float(own.get("thin", 0)),
        thins=int(own.get("thins", 20)),
        linear=own.get("linear", ""),
        topicclip=own.get("topicclip") != "false",
    )


def figures(inputs, prels, probs, spec: Spec, per_topic) -> dict:
    estimator = spec.estimator
    zero, pboot, world, allow = spec.zero, spec.pboot, spec.world, spec.allow
    synthetic, rho, thins = spec.synthetic, spec.thin, spec.thins
    design, unsampled = inputs["design"], None
    if synthetic:
        band = synthetic_band(
            prels,
            {} if zero else probs,
            design,
            level=inputs["level"],
            threshold=synthetic,
        )
        prels, probs, design = band.prels, band.probs, band.design
        unsampled = band.unsampled
    found = model_assisted_evaluate(
        prels,
        {} if zero else probs,
        inputs["runs"],
        estimator=estimator,
        level=inputs["level"],
        design=design,
        unsampled=unsampled,
    )
    if spec.linear:  # AP linearised at the model's (N_p, R_p): ratio_linearised
        fitted = topic_samples(
            prels, {} if zero else probs, estimator=estimator, level=inputs["level"]
        )
        found = linearised_runs(
            found,
            fitted,
            inputs["runs"],
            floor=spec.linear == "floor",
            calibrated=spec.linear in ("calibrated", "both"),
            moved=spec.linear == "both",
            clip=spec.topicclip,
        )
    if allow:  # the interval reaches as far as Beale's correction moved the estimate
        uncorrected = model_assisted_evaluate(
            prels,
            {} if zero else probs,
            inputs["runs"],
            estimator=replace(estimator, beale=None),
            level=inputs["level"],
            design=design,
            unsampled=unsampled,
        )
        for run, measures in found.items():
            ap = measures["AP"]
            moved = uncorrected[run]["AP"].estimate - ap.estimate
            lo, hi = ap.ci95
            below, above = (
                (abs(moved), abs(moved))
                if allow == "both"
                else (max(-moved, 0.0), max(moved, 0.0))
            )
            measures["AP"] = replace(
                ap, ci95=(max(lo - below, 0.0), min(hi + above, 1.0))
            )
    if synthetic:  # the band's common calibration error joins every run's variance
        for measures in found.values():
            ap = measures["AP"]
            var = ap.var + common_variance(band, ap.topics)
            low, high = interval95(ap.estimate, var)
            measures["AP"] = replace(ap, var=var, ci95=(max(low, 0.0), min(high, 1.0)))
    if rho:
        found = jackknifed(
            inputs,
            prels,
            {} if zero else probs,
            design,
            estimator,
            found,
            rho=rho,
            thins=int(thins),
        )
    if pboot:
        bias = simulated_bias(
            prels,
            {} if zero else probs,
            inputs["design"],
            inputs["runs"],
            level=inputs["level"],
            estimator=estimator,
            replicates=int(pboot),
            world=world,
            truth_labels=inputs["truth"],
        )
        for measures in found.values():
            ap = measures["AP"]
            measures["AP"] = recentred(
                ap, [t.estimate - bias[ap.name][t.qid] for t in ap.topics]
            )
    # The topics whose R̂ was raised to the relevant documents judged: their part of
    # the shift is reported apart (docs/results/intervals.md, "Where the shift is").
    samples = topic_samples(
        prels, {} if zero else probs, estimator=REPORTED, level=inputs["level"]
    )
    floored = {q for q, sample in samples.items() if sample.floored}
    errors, inside, half, est, tru, from_floored = [], [], [], {}, {}, []
    variances = {}
    for run, measures in found.items():
        ap = measures["AP"]
        qids = [t.qid for t in ap.topics]
        if not qids:
            continue
        truth = sum(per_topic[run][q] for q in qids) / len(qids)
        errors.append(ap.estimate - truth)
        from_floored.append(
            sum(
                t.estimate - per_topic[run][t.qid]
                for t in ap.topics
                if t.qid in floored
            )
            / len(qids)
        )
        lo, hi = ap.ci95
        inside.append(lo <= truth <= hi)
        half.append((hi - lo) / 2)
        est[run], tru[run], variances[run] = ap.estimate, truth, ap.var
    e = np.array(errors)
    return {
        "shift": float(e.mean()),
        "sd": float(e.std()),
        "rmse": float(math.sqrt((e**2).mean())),
        "coverage": float(np.mean(inside)),
        "half": float(np.mean(half)),
        "tau": kendall_tau(tru, est),
        "floored": float(np.mean(from_floored)),
        # Per run and per (run, topic), not averaged over draws: redraw's check of
        # the variance, with each topic's relevant judged documents.
        "_estimates": est,
        "_variances": variances,
        "_topics": {
            (run, t.qid): (t.estimate, t.var)
            for run, measures in found.items()
            for t in measures["AP"].topics
        },
        "_relevant": {q: sample.n_relevant for q, sample in samples.items()},
    }


def jackknifed(inputs, prels, probs, design, estimator, found, *, rho, thins) -> dict:
    """``found`` with each run's per-topic AP extrapolated from ``thins`` thinnings of
    the sample at ``rho`` (:mod:`lab.studies.thinned_jackknife`)."""
    rng = np.random.default_rng(11)
    sums: dict = {}
    smaller = {q: {d: rho * pi for d, pi in ds.items()} for q, ds in design.items()}
    for _ in range(thins):
        part = model_assisted_evaluate(
            thinned(prels, rho, rng),
            probs,
            inputs["runs"],
            estimator=estimator,
            level=inputs["level"],
            design=smaller,
        )
        for run, measures in part.items():
            for t in measures["AP"].topics:
                acc = sums.setdefault((run, t.qid), [0.0, 0])
                acc[0] += t.estimate
                acc[1] += 1
    for run, measures in found.items():
        ap = measures["AP"]
        values = []
        for t in ap.topics:
            total, n = sums.get((run, t.qid), (0.0, 0))
            values.append(extrapolated(t.estimate, total / n, rho) if n else t.estimate)
        measures["AP"] = recentred(ap, values)
    return found


def recentred(ap, values: list[float]):
    """The run's AP with each topic's estimate replaced by ``values`` (clipped to
    [0, 1]), its mean the new estimate and its interval moved with it."""
    if not values:
        return ap
    topics = tuple(
        replace(t, estimate=min(max(v, 0.0), 1.0))
        for t, v in zip(ap.topics, values, strict=True)
    )
    mean = sum(t.estimate for t in topics) / len(topics)
    lo, hi = ap.ci95
    shift = mean - ap.estimate
    return replace(
        ap,
        estimate=mean,
        topics=topics,
        ci95=(max(lo + shift, 0.0), min(hi + shift, 1.0)),
    )


def topic_var_ratio(draws: list[dict], thin_below: int = THIN_BELOW) -> tuple:
    """Summed over runs and topics, the mean estimated variance of a topic's AP over
    the draws against the variance its estimate has over them: over every topic, and
    over the thin ones (fewer than ``thin_below`` relevant judged on average)."""
    sums = {"all": [0.0, 0.0], "thin": [0.0, 0.0]}
    for key in draws[0]["_topics"]:
        found = [d["_topics"][key] for d in draws if key in d["_topics"]]
        if len(found) < len(draws):
            continue
        estimated = float(np.mean([v for _, v in found]))
        actual = float(np.var([e for e, _ in found]))
        relevant = np.mean([d["_relevant"].get(key[1], 0) for d in draws])
        for part in ("all", "thin") if relevant < thin_below else ("all",):
            sums[part][0] += estimated
            sums[part][1] += actual
    return tuple(a / b if b > 0 else math.nan for a, b in sums.values())


def sd_ratio(draws: list[dict]) -> float:
    """Mean over runs of the estimated sd (root of the mean variance over draws) over
    the sd the estimates actually have over the draws: 1 for a calibrated variance."""
    ratios = []
    for run in draws[0]["_estimates"]:
        actual = np.std([d["_estimates"][run] for d in draws])
        if actual > 0:
            estimated = math.sqrt(np.mean([d["_variances"][run] for d in draws]))
            ratios.append(estimated / actual)
    return float(np.mean(ratios)) if ratios else math.nan


PI_BANDS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def visibility(inputs: Mapping, bands=PI_BANDS) -> list[dict[str, float]]:
    """Per band ``[low, high)`` of π (the last one closed): the pooled documents, the
    relevant ones, Σ π over them (how many a sample draws in expectation), how many
    the sample drew, the model's Σ p, the band's share of R̂'s variance, and that
    variance as the model anticipates it, Σ (1 - π)/π p (1 - p), over its value under
    the true labels (``anticipated``; the same figure in every row, over all bands)."""
    level, probs = inputs["level"], inputs["crossfit"] or {}
    rows = [
        {
            "low": lo,
            "high": hi,
            "docs": 0,
            "relevant": 0,
            "expected": 0.0,
            "drawn": 0,
            "sum_p": 0.0,
            "var": 0.0,
            "anticipated": 0.0,
        }
        for lo, hi in pairwise(bands)
    ]
    for qid, topic in inputs["prels"].items():
        truth, p_of = inputs["truth"].get(qid, {}), probs.get(qid, {})
        for docno, pi in inputs["design"].get(qid, {}).items():
            row = rows[min(bisect_right(bands, pi) - 1, len(rows) - 1)]
            y, p = float(truth.get(docno, 0) >= level), p_of.get(docno, 0.0)
            row["docs"] += 1
            row["sum_p"] += p
            if pi > 0:
                row["var"] += (1 - pi) / pi * (y - p) ** 2
                row["anticipated"] += (1 - pi) / pi * p * (1 - p)
            if y:
                row["relevant"] += 1
                row["expected"] += pi
                row["drawn"] += topic.inclusion_prob.get(docno, 0.0) > 0
    total = sum(r["var"] for r in rows) or 1.0
    anticipated = sum(r["anticipated"] for r in rows) / total
    for row in rows:
        row["var"] /= total
        row["anticipated"] = anticipated
    return rows


def visibility_print(path: str, rows: list[dict[str, float]]) -> None:
    print(f"{path}: relevant pooled documents by inclusion probability")
    print("| π | documents | relevant | drawn in expectation | drawn | model's Σ p "
          "| share of V(R̂) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| [{r['low']:.2f}, {r['high']:.2f}) | {r['docs']} | {r['relevant']} | "
              f"{r['expected']:.1f} | {r['drawn']} | {r['sum_p']:.1f} | "
              f"{r['var']:.2f} |")  # fmt: skip
    if rows:
        print(
            f"V(R̂) the model anticipates over V(R̂) under the true labels: "
            f"{rows[0]['anticipated']:.2f}"
        )


def redraw(inputs, rng, factor: float = 1.0) -> tuple[dict[str, TopicPrels], dict]:
    """A fresh sample of the design, and that design: with ``factor`` ≠ 1, of the
    same per-draw probabilities q but ``round(factor K)`` draws per topic, every π
    recomputed as ``1 - (1 - q)^K'`` (how the bias moves with the sample's size)."""
    out, design = {}, {}
    level = inputs["level"]
    for qid in inputs["design"]:
        if qid not in inputs["prels"]:
            continue
        k, q = inputs.setdefault("_kq", {}).get(qid) or inputs["_kq"].setdefault(
            qid, draws_infer(inputs["design"][qid])
        )
        docs = list(q)
        probs = np.array([q[d] for d in docs])
        probs = probs / probs.sum()
        draws = max(1, round(factor * k))
        design[qid] = (
            inputs["design"][qid]
            if factor == 1
            else {d: 1.0 - (1.0 - probs[i]) ** draws for i, d in enumerate(docs)}
        )
        picked = set(rng.choice(len(docs), size=draws, replace=True, p=probs))
        topic = TopicPrels(qid)
        truth = inputs["truth"].get(qid, {})
        for i in picked:
            d = docs[i]
            topic.rel[d] = int(truth.get(d, 0) >= level) * level
            topic.inclusion_prob[d] = design[qid][d]
            topic.neu += 1
            topic.n_sampled += 1
        out[qid] = topic
    return out, design


def main(argv: list[str]) -> None:
    mode, rest = argv[0], argv[1:]
    cut = rest.index("--") if "--" in rest else len(rest)
    paths, specs = rest[:cut], [options_parse(s) for s in rest[cut + 1 :]]
    rows: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for path in paths:
        with open(path, "rb") as fh:
            inputs = pickle.load(fh)
        if mode == "visible":
            visibility_print(path, visibility(inputs))
            continue
        per_topic = pooled_truth(inputs)
        probs = inputs["crossfit"] or {}
        if mode in ("observed", "table"):
            for name, spec in specs:
                f = figures(inputs, inputs["prels"], probs, spec, per_topic)
                rows.setdefault(name, []).append((path, f))
                if mode == "observed":
                    shown = {k: v for k, v in f.items() if k[0] != "_"}
                    print(
                        path, name, " ".join(f"{k} {v:+.4f}" for k, v in shown.items())
                    )
            continue
        _, count, times = mode.split(":") + [""] * (2 - mode.count(":"))
        n, factor = int(count or 50), float(times or 1)
        rng = np.random.default_rng(7)
        acc: dict[str, list[dict]] = {name: [] for name, _ in specs}
        for _ in range(n):
            prels, design = redraw(inputs, rng, factor)
            drawn = dict(inputs, design=design)
            for name, spec in specs:
                acc[name].append(figures(drawn, prels, probs, spec, per_topic))
        for name, draws in acc.items():
            mean = {k: np.mean([r[k] for r in draws]) for k in draws[0] if k[0] != "_"}
            shifts = np.array([r["shift"] for r in draws])
            se = shifts.std() / math.sqrt(len(draws))
            inside = np.mean(np.abs(shifts) <= 0.02)
            topics_all, topics_thin = topic_var_ratio(draws)
            print(
                path,
                name,
                f"draws {n} x{factor:g} shift-se {se:.4f} shift-sd {shifts.std():.4f} "
                f"shift-median {np.median(shifts):+.4f} "
                f"within-0.02 {inside:.2f} sd-ratio {sd_ratio(draws):.2f} "
                f"topic-var-ratio {topics_all:.2f} thin {topics_thin:.2f}",
                " ".join(f"{k} {v:+.4f}" for k, v in mean.items()),
            )

    if mode == "table":
        table_print(rows)


def shared_error(shifts: list[float], sds: list[float], seeds: int = 20) -> dict:
    """What a per-seed coverage floor of 0.75 asks, from the samples' shifts (the error
    every run shares, its sd over samples) and their sd over runs (each run's own
    error): for an unbiased Gaussian estimate with an exactly calibrated 95% interval,
    the chance that a sample covers under 75% of its runs, the chance that some of
    ``seeds`` samples does, and the width factor over the calibrated interval for none
    of ``seeds`` to do so nine times in ten. A sample's coverage given its shared error
    c is about Φ((1.96 s - |c|)/own), where s² = shared² + own²."""
    normal = NormalDist()
    shared = float(np.std(shifts, ddof=1))
    own = math.sqrt(float(np.mean(np.square(sds))))
    s = math.hypot(shared, own)
    q75 = normal.inv_cdf(0.75)
    below = 2 * (1 - normal.cdf((Z_95 * s - q75 * own) / shared))
    wanted = 1 - 0.9 ** (1 / seeds)  # per sample, for 0.9 over ``seeds`` samples
    factor = (normal.inv_cdf(1 - wanted / 2) * shared + q75 * own) / (Z_95 * s)
    return {
        "shared": shared,
        "own": own,
        "below": below,
        "any": 1 - (1 - below) ** seeds,
        "factor": factor,
    }


def table_print(rows: dict[str, list[tuple[str, dict[str, float]]]]) -> None:
    """Per option set: one markdown row per sample, then the summary over them: mean
    and extreme shift, the RMSE over every run of every sample, the width it calls
    for (1.5 x 1.96 x RMSE), the mean half-width, mean and worst coverage, tau."""
    print("| options | sample | shift | sd | RMSE | coverage | half-width | tau |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, found in rows.items():
        for path, f in found:
            label = path.rstrip("/").split("/")[-2]
            print(f"| {name} | {label} | {f['shift']:+.4f} | {f['sd']:.4f} | "
                  f"{f['rmse']:.4f} | {f['coverage']:.3f} | {f['half']:.4f} | "
                  f"{f['tau']:.3f} |")  # fmt: skip
    print()
    print(
        "| options | samples | mean shift | shifts in [-0.02, 0.02] | worst shift | "
        "RMSE | 1.5 x 1.96 x RMSE | mean half-width | coverage (worst) | tau "
        "| shift from floored topics |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, found in rows.items():
        fs = [f for _, f in found]
        shifts = [f["shift"] for f in fs]
        rmse = math.sqrt(np.mean([f["rmse"] ** 2 for f in fs]))
        inside = sum(abs(x) <= 0.02 for x in shifts)
        worst = max(shifts, key=abs)
        print(f"| {name} | {len(fs)} | {np.mean(shifts):+.4f} | {inside}/{len(fs)} | "
              f"{worst:+.4f} | {rmse:.4f} | {1.5 * 1.96 * rmse:.4f} | "
              f"{np.mean([f['half'] for f in fs]):.4f} | "
              f"{np.mean([f['coverage'] for f in fs]):.3f} "
              f"({min(f['coverage'] for f in fs):.3f}) | "
              f"{np.mean([f['tau'] for f in fs]):.3f} | "
              f"{np.mean([f['floored'] for f in fs]):+.4f} |")  # fmt: skip
    print()
    print(
        "| options | sd of the shift over samples | sd over runs within a sample | "
        "calibrated 95%: a sample under 0.75 | some of 20 | width for none of 20 |"
    )
    print("| --- | --- | --- | --- | --- | --- |")  # fmt: skip
    for name, found in rows.items():
        if len(found) < 2:
            continue
        e = shared_error([f["shift"] for _, f in found], [f["sd"] for _, f in found])
        print(f"| {name} | {e['shared']:.4f} | {e['own']:.4f} | {e['below']:.3f} | "
              f"{e['any']:.2f} | {e['factor']:.2f} x |")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
