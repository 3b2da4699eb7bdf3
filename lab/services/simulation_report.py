"""Numbers and files of a simulation report: ``report.json``, ``report.md``, PNG plots.

:func:`report_build` turns :class:`~lab.services.simulation.SimulationData`
into a JSON-ready dict; :func:`report_write` writes it with tables and plots.
Definitions (binary relevance: grade >= the relevance level):

* effort: pool documents, judged (sampled) documents, nuggets;
* ``matcher_map`` / ``baseline_map``: MAP of the pool ranked by matcher score / by BM25
  with relevance feedback from the judged sample, against the full qrels, ``R`` = the
  relevant pooled documents (topics without one are skipped);
* ``precision`` / ``recall``: inferred relevance of the *unjudged* pool documents
  against the full qrels (``merged_*``: the whole pool, human labels first);
* ``tau``: Kendall's tau-b between the pooled runs' MAP under the full qrels and their
  MAP under (a) the sample judgments alone, (b) sample plus inferred qrels (human labels
  override), (c) statMAP on the sample (docs/reference/algorithms.md section 2), (d) ``eap``: mean
  expected AP under probabilistic qrels (human label where judged, the relevance
  model's probability elsewhere; :mod:`nuggets_app.ir.expected`);
* ``map_unjudged`` / ``baseline_map_unjudged``: MAP over the *unjudged* pooled documents
  only (``R`` = the relevant ones among them) of the inference's ranking (the model's
  probability, or the matcher score with ``--inference paper``) / of BM25 with
  relevance feedback;
* ``expected_relevant``: the sum of the probabilities of the unjudged pooled documents
  (the model's estimate of how many of them are relevant), against
  ``true_relevant_unjudged``; ``calibration``: per probability bin of width 0.1, the
  unjudged documents in it, their mean probability and the observed share relevant.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lab.maths.simulation import found_curve, set_quality
from lab.services.report_json import json_safe
from lab.services.simulation import SimulationData
from lab.services.simulation_estimators import estimators_report
from nuggets_app.ir.expected import labels_merge, qrels_probabilities, run_expected
from nuggets_app.ir.lengthbias import length_bias_table, length_samples, length_tests
from nuggets_app.ir.measures import run_evaluate, scored_ranking_map
from nuggets_app.ir.prels import PrelsRecord, prels_load, ranking_order
from nuggets_app.ir.ranking import kendall_tau, tau_ap_symmetric
from nuggets_app.ir.statap import statap_evaluate

Labels = dict[str, dict[str, int]]
# Length bins of the collection (equal numbers of documents) for the bias table.
LENGTH_BINS = 5
CALIBRATION_BINS = 10


def _binary(labels: Mapping[str, Mapping[str, int]], level: int) -> Labels:
    return {
        q: {d: int(g >= level) for d, g in docs.items()} for q, docs in labels.items()
    }


def _unjudged(data: SimulationData) -> dict[str, list[str]]:
    return {
        q: [d for d in docs if d not in data.sample.get(q, {})]
        for q, docs in data.pool.items()
    }


def _pool_labels(data: SimulationData, truth: Labels) -> Labels:
    return {
        q: {d: truth.get(q, {}).get(d, 0) for d in docs}
        for q, docs in data.pool.items()
    }


def _with_judgments(scores: Mapping[str, Mapping[str, float]], human: Labels) -> dict:
    """Judged relevant documents first and judged non-relevant last, then by score."""
    shifted = {}
    for qid, per_doc in scores.items():
        span = max((abs(s) for s in per_doc.values()), default=0.0) + 1.0
        judged = human.get(qid, {})
        shifted[qid] = {
            d: s + (2 * span if judged.get(d) == 1 else -2 * span if d in judged else 0)
            for d, s in per_doc.items()
        }
    return shifted


def _effort(data: SimulationData, human: Labels) -> dict[str, Any]:
    pool_size = sum(len(d) for d in data.pool.values())
    judged = sum(len(d) for d in data.sample.values())
    return {
        "topics": len(data.pool),
        "pool_size": pool_size,
        "judged": judged,
        "judged_relevant": sum(sum(v.values()) for v in human.values()),
        "unjudged": pool_size - judged,
        "judged_fraction": judged / pool_size if pool_size else math.nan,
        "nuggets": sum(data.nuggets.values()),
        "nuggets_with_keywords": data.keyword_nuggets,
        "topics_with_nuggets": sum(1 for n in data.nuggets.values() if n),
    }


def _inference(data: SimulationData, truth: Labels, human: Labels) -> dict[str, Any]:
    unjudged = _unjudged(data)
    relevant = {q: {d for d, g in docs.items() if g} for q, docs in truth.items()}
    inferred = {
        q: data.inferred.get(q, set()) & set(docs) for q, docs in unjudged.items()
    }
    quality = set_quality(inferred, relevant, unjudged)
    verdicts = data.merged()
    merged_rel = {q: {d for d, v in docs.items() if v} for q, docs in verdicts.items()}
    merged = set_quality(merged_rel, relevant, data.pool)
    return {
        "rule": data.config.rule,
        "inferred_relevant": sum(len(v) for v in inferred.values()),
        "unjudged_relevant": quality.true_positives + quality.false_negatives,
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
        "merged_precision": merged.precision,
        "merged_recall": merged.recall,
    }


def _threshold_curve(data: SimulationData, truth: Labels) -> list[dict[str, float]]:
    unjudged = _unjudged(data)
    points = []
    for step in range(21):
        threshold = step / 20
        rel = nonrel = 0
        for qid, docs in unjudged.items():
            scores = data.scores.get(qid, {})
            for d in docs:
                if scores.get(d, 0.0) >= threshold and scores.get(d, 0.0) > 0:
                    if truth.get(qid, {}).get(d, 0):
                        rel += 1
                    else:
                        nonrel += 1
        points.append({"threshold": threshold, "relevant": rel, "non_relevant": nonrel})
    return points


def _curves(data: SimulationData, truth: Labels) -> dict[str, list]:
    unjudged = _unjudged(data)
    relevant = {q: {d for d, g in docs.items() if g} for q, docs in truth.items()}

    def ranked(scores: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
        return {
            q: ranking_order({d: scores.get(q, {}).get(d, 0.0) for d in docs})
            for q, docs in unjudged.items()
        }

    return {
        "matcher": found_curve(ranked(data.scores), relevant),
        "baseline": found_curve(ranked(data.baseline), relevant),
    }


def _prels(data: SimulationData, human: Labels) -> dict:
    records, line = [], 0
    for qid in sorted(data.sample):
        for docno, prob in sorted(data.sample[qid].items()):
            line += 1
            records.append(PrelsRecord(line, qid, docno, human[qid][docno], 1, prob))
    prels = prels_load(records, source="sample")
    # A sample in rounds (simulation_rounds.RoundsData): each round's variance factor.
    for qid, weights in getattr(data, "var_weight", {}).items():
        if qid in prels:
            prels[qid].var_weight = dict(weights)
    return prels


def _map(qrels: Labels, run: Mapping[str, Mapping[str, float]]) -> float:
    return run_evaluate(qrels, run, measures=["AP"]).mean.get("AP", math.nan)


def _probabilities(data: SimulationData) -> dict[str, dict[str, float]]:
    """The model's probabilities, or 1 for an inferred document and 0 otherwise."""
    if data.probabilities is not None:
        return {q: dict(docs) for q, docs in data.probabilities.items()}
    return {
        q: {d: float(d in data.inferred.get(q, set())) for d in docs}
        for q, docs in data.pool.items()
    }


def _unjudged_quality(data: SimulationData, truth: Labels) -> dict[str, Any]:
    """MAP over the unjudged pooled documents, the expected and true relevant counts
    among them, and the calibration table."""
    unjudged = _unjudged(data)
    labels = {
        q: {d: truth.get(q, {}).get(d, 0) for d in docs} for q, docs in unjudged.items()
    }
    _, inference_map = scored_ranking_map(data.inference_scores(), labels)
    _, baseline_map = scored_ranking_map(data.baseline, labels)
    true_count = sum(sum(v.values()) for v in labels.values())
    out: dict[str, Any] = {
        "map_unjudged": inference_map,
        "baseline_map_unjudged": baseline_map,
        "true_relevant_unjudged": true_count,
        "expected_relevant": math.nan,
        "calibration": [],
    }
    if data.probabilities is None:
        return out
    pairs = [
        (data.probabilities.get(q, {}).get(d, 0.0), rel)
        for q, docs in labels.items()
        for d, rel in docs.items()
    ]
    out["expected_relevant"] = math.fsum(p for p, _ in pairs)
    bins = []
    for index in range(CALIBRATION_BINS):
        low, high = index / CALIBRATION_BINS, (index + 1) / CALIBRATION_BINS
        inside = [
            (p, r)
            for p, r in pairs
            if low <= p < high or (index == CALIBRATION_BINS - 1 and p == high)
        ]
        bins.append(
            {
                "bin_low": low,
                "bin_high": high,
                "n": len(inside),
                "mean_p": statistics.fmean(p for p, _ in inside)
                if inside
                else math.nan,
                "observed": statistics.fmean(r for _, r in inside)
                if inside
                else math.nan,
            }
        )
    out["calibration"] = bins
    return out


def _systems(data: SimulationData, truth: Labels, human: Labels) -> dict[str, Any]:
    topics = set(data.pool)
    inferred = {q: dict.fromkeys(docs, 1) for q, docs in data.inferred.items()}
    qrels = {
        "full": {q: v for q, v in truth.items() if q in topics},
        "sample_only": human,
        "sample_plus_inferred": labels_merge(human, inferred),
    }
    prels = _prels(data, human)
    probs = (
        data.expected_qrels
        if data.expected_qrels is not None
        else qrels_probabilities(human, _probabilities(data))
    )
    scores: dict[str, dict[str, float]] = {
        name: {} for name in [*qrels, "statap", "eap"]
    }
    for name, run in sorted(data.runs.items()):
        run = {q: docs for q, docs in run.items() if q in topics}
        for variant, labels in qrels.items():
            scores[variant][name] = _map(labels, run)
        scores["statap"][name] = statap_evaluate(prels, run).summary.stat_map
        scores["eap"][name] = run_expected(probs, run, measures=["EAP"]).mean["EAP"]
    full = scores["full"]
    order = sorted(full, key=lambda r: (-full[r], r))
    tau = {v: kendall_tau(full, scores[v]) for v in scores if v != "full"}
    tau["full_with_itself"] = kendall_tau(full, full)
    tau_ap = {
        v: tau_ap_symmetric(order, sorted(scores[v], key=lambda r: (-scores[v][r], r)))
        for v in scores
        if v != "full"
    }
    return {"runs": len(full), "tau": tau, "tau_ap": tau_ap, "map": scores}


PAPER_THRESHOLD = 0.5


def _tau_both(scores: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    full = scores["full"]
    order = sorted(full, key=lambda r: (-full[r], r))
    return {
        "tau": {v: kendall_tau(full, scores[v]) for v in scores if v != "full"},
        "tau_ap": {
            v: tau_ap_symmetric(
                order, sorted(scores[v], key=lambda r: (-scores[v][r], r))
            )
            for v in scores
            if v != "full"
        },
    }


def _systems_graded(data: SimulationData) -> dict[str, Any]:
    """System rankings beyond MAP: nDCG@10 with graded gains (the qrels grades) under
    the full qrels, the graded sample judgments alone, the sample plus the inferred
    documents (gain = the relevance level), the sample plus the paper's rule (matcher
    score >= 0.5, whatever the inference), and expected nDCG@10 under the model's
    probabilities (binary gains; model inference only); and MAP (binary, as in
    ``tau``) under the paper's rule. Tau and tau_AP against the full qrels."""
    topics = set(data.pool)
    level = data.config.relevance_level
    judged = {q: set(docs) for q, docs in data.human.items()}
    inferred = {q: dict.fromkeys(docs, level) for q, docs in data.inferred.items()}
    paper = {
        q: {
            d: level
            for d, s in docs.items()
            if s >= PAPER_THRESHOLD and s > 0 and d not in judged.get(q, set())
        }
        for q, docs in data.scores.items()
    }
    qrels = {
        "full": {q: v for q, v in data.truth.items() if q in topics},
        "sample_only": data.human,
        "sample_plus_inferred": labels_merge(data.human, inferred),
        "paper_rule": labels_merge(data.human, paper),
    }
    binary_full = _binary(qrels["full"], level)
    binary_paper = _binary(qrels["paper_rule"], level)
    ndcg: dict[str, dict[str, float]] = {name: {} for name in qrels}
    ap: dict[str, dict[str, float]] = {"full": {}, "paper_rule": {}}
    probs = None
    if data.probabilities is not None:
        probs = qrels_probabilities(_binary(data.human, level), _probabilities(data))
        ndcg["endcg"] = {}
    for name, run in sorted(data.runs.items()):
        run = {q: docs for q, docs in run.items() if q in topics}
        for variant, labels in qrels.items():
            result = run_evaluate(labels, run, measures=["nDCG@10"])
            ndcg[variant][name] = result.mean.get("nDCG@10", math.nan)
        ap["full"][name] = _map(binary_full, run)
        ap["paper_rule"][name] = _map(binary_paper, run)
        if probs is not None:
            expected = run_expected(probs, run, measures=["EnDCG@10"])
            ndcg["endcg"][name] = expected.mean["EnDCG@10"]
    return {
        "ndcg10": {**_tau_both(ndcg), "scores": ndcg},
        "map_paper_rule": {**_tau_both(ap), "scores": ap["paper_rule"]},
        "paper_rule_inferred": sum(len(v) for v in paper.values()),
    }


def _text_coverage(data: SimulationData) -> dict[str, int]:
    """Pooled and judged documents without text (placeholders: nothing can match
    them; the simulated assessor judges them from the qrels like any other)."""
    empty = {d for d, words in data.doc_words.items() if words == 0}
    return {
        "pooled": sum(len(docs) for docs in data.pool.values()),
        "pooled_without_text": sum(
            1 for docs in data.pool.values() for d in docs if d in empty
        ),
        "judged": sum(len(docs) for docs in data.sample.values()),
        "judged_without_text": sum(
            1 for docs in data.sample.values() for d in docs if d in empty
        ),
    }


def _length_bias(data: SimulationData, truth: Labels, human: Labels) -> dict[str, Any]:
    """Length bias of the pooled relevance verdicts, full qrels vs sample + inferred.

    Both sets of verdicts cover every pooled (topic, document) pair, so
    ``p_rel_given_judged`` per length bin is the fraction of pooled pairs called relevant.
    """
    verdicts = data.merged()
    full: dict[tuple[str, str], int] = {}
    merged: dict[tuple[str, str], int] = {}
    for qid, docs in data.pool.items():
        for d in docs:
            full[(qid, d)] = truth.get(qid, {}).get(d, 0)
            merged[(qid, d)] = verdicts[qid][d]
    lengths = data.doc_words
    bins_full = length_bias_table(lengths, full, bins=LENGTH_BINS)
    bins_merged = length_bias_table(lengths, merged, bins=LENGTH_BINS)
    samples = length_samples(lengths, full, merged)
    means = {k: statistics.fmean(v) if v else math.nan for k, v in samples.items()}
    return {
        "mean_words": means,
        "inferred_over_human_mean_length": means["inferred_relevant"]
        / means["relevant"]
        if means["relevant"]
        else math.nan,
        "bins": [
            {
                "bin": h.index + 1,
                "words": f"{h.min_length}-{h.max_length}",
                "human_rate": h.p_rel_given_judged,
                "inferred_rate": m.p_rel_given_judged,
                "human_share": h.relevant_share,
                "inferred_share": m.relevant_share,
            }
            for h, m in zip(bins_full, bins_merged, strict=True)
        ],
        "tests": [asdict(t) for t in length_tests(lengths, full, merged)],
    }


def report_build(data: SimulationData) -> dict[str, Any]:
    """Every figure of the report as a JSON-ready dict (keys listed in the module doc)."""
    level = data.config.relevance_level
    truth = _binary(data.truth, level)
    human = _binary(data.human, level)
    labels = _pool_labels(data, truth)
    effort = _effort(data, human)
    inference = _inference(data, truth, human)
    _, matcher_map = scored_ranking_map(data.scores, labels)
    _, baseline_map = scored_ranking_map(data.baseline, labels)
    _, matcher_j = scored_ranking_map(_with_judgments(data.scores, human), labels)
    _, baseline_j = scored_ranking_map(_with_judgments(data.baseline, human), labels)
    systems = _systems(data, truth, human)
    unjudged = _unjudged_quality(data, truth)
    # estimators, default_estimator, pooled_truth, bias_check: see that module
    estimators = estimators_report(
        data, truth=truth, prels=_prels(data, human), system_maps=systems["map"]
    )
    config = data.config
    return {
        "collection": data.collection,
        "config": {
            "depth": config.depth,
            "sample_size": data.sample_size,
            "sample_fraction": config.sample_fraction,
            "seed": config.seed,
            "rule": config.rule,
            "inference": config.inference,
            "nuggets": config.nuggets,
            "semantic": config.semantic,
            "nugget_choice": config.nugget_choice,
            "ablate": list(config.ablate),
            "k": config.k,
            "lam": config.lam,
            "relevance_level": level,
            "nuggets_per_doc": config.extraction.nuggets_per_doc,
            "max_terms": config.extraction.max_terms,
            "min_terms": config.extraction.min_terms,
            "keywords": config.extraction.keywords,
        },
        "topics_without_qrels": data.topics_without_qrels,
        **{k: effort[k] for k in ("pool_size", "judged", "nuggets")},
        "inferred_relevant": inference["inferred_relevant"],
        "matcher_map": matcher_map,
        "baseline_map": baseline_map,
        "matcher_map_with_judgments": matcher_j,
        "baseline_map_with_judgments": baseline_j,
        "precision": inference["precision"],
        "recall": inference["recall"],
        **unjudged,
        "tau": systems["tau"],
        "tau_ap": systems["tau_ap"],
        "model": data.model,
        "families": data.families,
        "effort": effort,
        "inference": inference,
        "threshold_curve": _threshold_curve(data, truth),
        "curves": _curves(data, truth),
        "systems": systems,
        "length_bias": _length_bias(data, truth, human),
        "systems_graded": _systems_graded(data),
        "text_coverage": _text_coverage(data),
        "timings": data.timings,
        **estimators,
    }


def report_write(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the plots into ``out_dir``."""
    from lab.services.simulation_plots import (
        plots_write,
        report_markdown,
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    json_path.write_text(json.dumps(json_safe(report), indent=1, sort_keys=True))
    plots = plots_write(report, out_dir)
    md_path = out_dir / "report.md"
    md_path.write_text(report_markdown(report, [p.name for p in plots]))
    return [json_path, md_path, *plots]
