"""Measuring reusability: hold runs out of the pool, build the collection from the
others, and evaluate the held-out runs as new systems.

``leave-one-run-out`` holds out each run in turn (Zobel 1998); ``leave-one-group-out``
each group of runs (a groups file, else the shared prefix of the names,
:func:`nuggets_app.ir.reusability.run_groups`), since the runs of one team retrieve
alike and a team's runs arrive together (Büttcher et al. 2007). For every held-out
group, :func:`reusability_run` does what ``simulate`` does with the other runs: the
depth pool, the statAP sample, the simulated assessor's judgments and nuggets, the
matching job over the pool and its fit with the sample's design. The held-out runs
are then evaluated against the job exactly as ``evaluate --job`` and the new-run page
evaluate a new run (:func:`nuggets_app.evaluation.services.new_runs.
new_runs_evaluate`): their documents down to the pool depth that the pool lacks are
matched against the job's nuggets and scored beside the pool. Every run, kept and held
out, is scored by each estimator:

* ``sample_only``: AP under the judged sample, unjudged documents non-relevant;
* ``statap``: statMAP of the sample's prels;
* ``bpref`` and ``condensed_ap`` (Sakai 2007): over the judged documents only;
* ``eap``: expected AP, the full fit's p where unjudged (held-out documents too);
* the default estimator (``model_assisted``): cross-fitted p, the held-out runs'
  unpooled documents entering the pool P with p alone (π = 0), not scaled by the
  topic's power tuning (``unsampled`` of :func:`nuggets_app.ir.model_assisted.
  topic_sample`).

The truth is MAP under the full qrels. Per held-out run: its score and rank among all
runs under each estimator in its own experiment, against its full-qrels score and
rank; summary per estimator (:func:`nuggets_app.ir.reusability.reusability_summary`).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lab.maths.simulation import SimulationError
from lab.services.simulation import (
    _assessor,
    _judge,
    _match,
    _pool_and_sample,
    _pool_docnos,
    simulation_check,
)
from lab.services.simulation_config import (
    SimulationConfig,
)
from lab.services.simulation_job import job_fit_and_figures
from lab.services.simulation_nuggets import (
    nuggets_extract_human,
    nuggets_extract_simulated,
)
from nuggets_app.collection.services.suite_runs import qrels_read, runs_scores
from nuggets_app.evaluation.services.estimates import RunEstimates
from nuggets_app.evaluation.services.new_runs import new_runs_evaluate
from nuggets_app.inference.services.unpooled import later_columns
from nuggets_app.ir.expected import run_expected
from nuggets_app.ir.measures import run_evaluate
from nuggets_app.ir.model_assisted import DEFAULT_ESTIMATOR, ranked
from nuggets_app.ir.outside_pool import top_up_draw
from nuggets_app.ir.prels import (
    PrelsRecord,
    TopicPrels,
    prels_load,
    ranking_order,
    topic_key,
)
from nuggets_app.ir.reusability import (
    HeldOut,
    held_out,
    judged_mean,
    reusability_summary,
    run_groups,
)
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.models import Collection, Document, MatchJob, Run
from nuggets_app.pooling.selectors import sample_inclusion_by_topic

MODES = ("leave-one-run-out", "leave-one-group-out")
ESTIMATORS = (
    "sample_only",
    "statap",
    "bpref",
    "condensed_ap",
    "eap",
    DEFAULT_ESTIMATOR,
)
Labels = dict[str, dict[str, int]]
Scores = dict[str, dict[str, float]]
Runs = dict[str, Scores]


def held_out_groups(
    names: Iterable[str], mode: str, groups: Mapping[str, str] | None = None
) -> dict[str, list[str]]:
    """``{group: runs}`` held out together: one run each (``leave-one-run-out``), or
    the groups of ``groups`` (every run must be listed) or of the names' prefix."""
    names = sorted(names)
    if mode not in MODES:
        raise SimulationError(f"--reusability must be one of {', '.join(MODES)}")
    if mode == "leave-one-run-out":
        return {name: [name] for name in names}
    if groups is not None:
        missing = [n for n in names if n not in groups]
        if missing:
            raise SimulationError(
                f"the groups file lists no group for run {missing[0]} "
                f"({len(missing)} runs unlisted)"
            )
        of = {n: groups[n] for n in names}
    else:
        of = run_groups(names)
    out: dict[str, list[str]] = {}
    for name in names:
        out.setdefault(of[name], []).append(name)
    if len(out) < 2:
        raise SimulationError("leave-one-group-out needs at least two groups of runs")
    return out


def _binary(labels: Mapping[str, Mapping[str, int]], level: int) -> Labels:
    return {
        q: {d: int(g >= level) for d, g in docs.items()} for q, docs in labels.items()
    }


def _prels(
    sample: Mapping[str, Mapping[str, float]], human: Labels
) -> dict[str, TopicPrels]:
    records, line = [], 0
    for qid in sorted(sample):
        for docno, prob in sorted(sample[qid].items()):
            line += 1
            records.append(PrelsRecord(line, qid, docno, human[qid][docno], 1, prob))
    return prels_load(records, source="sample")


def _map(qrels: Labels, run: Scores) -> float:
    return run_evaluate(qrels, run, measures=["AP"]).mean.get("AP", math.nan)


def _relevant_within(qrels: Labels, docs: Mapping[str, Iterable[str]]) -> Labels:
    """The qrels with every relevant document outside ``docs`` (per topic) counted as
    non-relevant: the truth a judge of those documents alone could reach."""
    out: Labels = {}
    for qid, labels in qrels.items():
        inside = set(docs.get(qid, ()))
        out[qid] = {d: (g if d in inside else 0) for d, g in labels.items()}
    return out


def _top(run: Mapping[str, Mapping[str, float]], depth: int) -> dict[str, list[str]]:
    return {q: ranked(docs, depth) for q, docs in run.items()}


def _unpooled(
    held: Runs, pooled: Mapping[str, list[str]], depth: int
) -> dict[str, list[str]]:
    """Per pooled topic, the held-out runs' documents down to ``depth`` that the
    pool lacks (the documents they would have added to it)."""
    out: dict[str, set[str]] = {}
    for run in held.values():
        for qid, docs in run.items():
            if qid not in pooled:
                continue
            known = set(pooled[qid])
            out.setdefault(qid, set()).update(
                d for d in ranking_order(docs)[:depth] if d not in known
            )
    return {q: sorted(d) for q, d in out.items() if d}


def _calibration(
    extra: Mapping[str, list[str]], p: Mapping[str, Mapping[str, float]], truth: Labels
) -> dict[str, float]:
    """The held-out group's unpooled documents: how many, the model's expected count
    of relevant ones (Σ p, 0 where a topic has no fitted fold) and the true count."""
    docs = [(q, d) for q, ds in extra.items() for d in ds]
    judged = [(q, d) for q, d in docs if d in truth.get(q, {})]
    return {
        "documents": float(len(docs)),
        "expected_relevant": math.fsum(p.get(q, {}).get(d, 0.0) for q, d in docs),
        "true_relevant": float(sum(truth.get(q, {}).get(d, 0) for q, d in docs)),
        # The qrels judged only some (TREC: a shallower pool): the true count is a
        # lower bound, and the judged ones compare p with their labels exactly.
        "judged": float(len(judged)),
        "expected_relevant_judged": math.fsum(
            p.get(q, {}).get(d, 0.0) for q, d in judged
        ),
    }


def _scores(
    runs: Runs,
    *,
    human: Labels,
    prels: Mapping[str, TopicPrels],
    expected: Scores,
    estimates: Mapping[str, RunEstimates],
) -> dict[str, dict[str, float]]:
    """``{estimator: {run: MAP}}`` of every run; ``expected``: the probabilistic qrels
    of EAP (the held-out runs' unpooled documents with the full fit's p beside the
    pool); ``estimates``: the product's estimates of the pooled and new runs."""
    rankings = {n: {q: ranking_order(d) for q, d in r.items()} for n, r in runs.items()}
    out: dict[str, dict[str, float]] = {e: {} for e in ESTIMATORS}
    for name, run in runs.items():
        out["sample_only"][name] = _map(human, run)
        out["statap"][name] = statap_evaluate(prels, run).summary.stat_map
        out["bpref"][name] = judged_mean(rankings[name], human, "bpref")
        out["condensed_ap"][name] = judged_mean(rankings[name], human, "condensed_ap")
        out["eap"][name] = run_expected(expected, run, measures=["EAP"]).mean["EAP"]
        out[DEFAULT_ESTIMATOR][name] = estimates[name].ap.estimate
    return out


def _later_p(job: MatchJob) -> Scores:
    """{qid: {docno: p}}: the full fit's p of the documents scored for the job after
    it ran (the held-out runs' unpooled documents), beside the pool."""
    topics = list(job.topics.values_list("pk", flat=True))
    columns = later_columns(job=job, on_model=True, topics=topics)
    qids = dict(job.topics.values_list("pk", "qid"))
    ids = {d for docs, _ in columns.values() for d in docs.tolist()}
    docnos = dict(Document.objects.filter(pk__in=ids).values_list("pk", "docno"))
    return {
        qids[t]: {docnos[d]: v for d, v in zip(docs.tolist(), p.tolist(), strict=True)}
        for t, (docs, p) in columns.items()
    }


def reusability_run(
    *,
    collection: Collection,
    qrels_path: str,
    runs: Iterable[Run],
    config: SimulationConfig,
    mode: str,
    groups: Mapping[str, str] | None = None,
    top_up: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The reusability report (keys: ``mode``, ``groups``, ``default_estimator``,
    ``full``, ``reusability`` {estimator: summary}, ``runs`` rows, ``unpooled`` per
    group: the held-out documents scored, the sum of their cross-fit p and how many
    are relevant under the full qrels, the sum of their calibrated p and the job's
    calibration; ``timings``). Each run row's ``model_assisted`` has the estimate's
    95% interval ``ci``; with ``top_up`` K > 0, ``top_up`` holds the figures after a
    top-up of K draws per topic of its unpooled documents judged from the qrels
    (:func:`_top_up`), and ``pooled_rel_error`` the kept runs' relative errors
    (``pooled_rel_error_pool``: against the pool's truth).

    Three truths: ``full.map``, MAP under the full qrels; ``full.pool_map``, with
    only the relevant documents some run retrieved down to the depth (every run
    pooled: what the product's pooled figures estimate); and each held-out run's
    ``full.reachable_map``, with only those of its experiment's pool and its own
    list (the best any estimate from those documents can do)."""
    say = progress or (lambda message: None)
    runs = sorted(runs, key=lambda r: r.name)
    held_groups = held_out_groups([r.name for r in runs], mode, groups)
    level = config.relevance_level
    truth = _binary(qrels_read(qrels_path), level)
    all_scores = runs_scores(runs)
    simulation_check(collection, config)
    assessor = _assessor(config.assessor)
    rows: dict[str, list[HeldOut]] = {e: [] for e in ESTIMATORS}
    per_run: list[dict[str, Any]] = []
    unpooled: dict[str, dict[str, float]] = {}
    full: dict[str, float] = {}
    full_qrels: Labels = {}
    pool_truth: dict[str, float] = {}
    relevant: dict[str, int] = {}
    timings: dict[str, float] = {}
    pooled_errors: list[float] = []
    pooled_errors_pool: list[float] = []
    for group, names in held_groups.items():
        started = time.perf_counter()
        kept = [r for r in runs if r.name not in names]
        pool, sample = _pool_and_sample(collection, kept, config, truth)
        pooled = _pool_docnos(pool)
        topics = set(pooled)
        scored = {
            n: {q: d for q, d in s.items() if q in topics}
            for n, s in all_scores.items()
        }
        if not full:
            full_qrels = {q: v for q, v in truth.items() if q in topics}
            full = {n: _map(full_qrels, s) for n, s in scored.items()}
            # Every run pooled at the same depth: the truth the product's pooled
            # figures estimate, which differs from the full qrels' wherever they hold
            # relevant documents no run retrieved that deep.
            everyone: dict[str, set[str]] = {}
            for s in scored.values():
                for q, top in _top(s, config.depth).items():
                    everyone.setdefault(q, set()).update(top)
            in_pool = _relevant_within(full_qrels, everyone)
            pool_truth = {n: _map(in_pool, s) for n, s in scored.items()}
            relevant = {
                "full": sum(sum(v.values()) for v in full_qrels.values()),
                "in_pool": sum(sum(v.values()) for v in in_pool.values()),
            }
        grades = _judge(sample, qrels_read(qrels_path), assessor)
        extract = (
            nuggets_extract_human
            if config.nuggets == "human"
            else nuggets_extract_simulated
        )
        extract(collection, grades, assessor, config)
        # The product's path: the job over the kept runs' pool, fitted with the
        # sample's design, and the held-out runs evaluated as new runs against it.
        job = _match(collection, pool, list(pooled), assessor, config)
        kept_scores = {r.name: scored[r.name] for r in kept}
        figures = job_fit_and_figures(
            job=job, sample=sample, runs=kept_scores, config=config
        )
        evaluation = new_runs_evaluate(
            job=job,
            sample=sample,
            new_runs={n: scored[n] for n in names},
            pooled_runs=kept_scores,
            inline_max=10**9,
        )
        if evaluation.estimates is None:
            raise SimulationError(f"held out {group}: unpooled documents not scored")
        extra = _unpooled({n: scored[n] for n in names}, pooled, config.depth)
        later = _later_p(job)
        expected = {q: dict(d) for q, d in figures.expected.items()}
        for qid, docs in later.items():
            expected.setdefault(qid, {}).update(
                (d, p) for d, p in docs.items() if d not in expected[qid]
            )
        human = _binary(grades, level)
        estimated = _scores(
            scored,
            human=human,
            prels=_prels(sample_inclusion_by_topic(sample=sample), human),
            expected=expected,
            estimates=evaluation.estimates,
        )
        topped = (
            _top_up(
                job=job,
                sample=sample,
                held={n: scored[n] for n in names},
                kept=kept_scores,
                evaluation=evaluation,
                truth=qrels_read(qrels_path),
                draws=top_up,
                seed=config.seed,
            )
            if top_up > 0
            else {}
        )
        pooled_errors += [
            abs(evaluation.estimates[n].ap.estimate - full[n]) / full[n]
            for n in kept_scores
            if full.get(n, 0) > 0
        ]
        pooled_errors_pool += [
            abs(evaluation.estimates[n].ap.estimate - pool_truth[n]) / pool_truth[n]
            for n in kept_scores
            if pool_truth.get(n, 0) > 0
        ]
        for name in names:
            row: dict[str, Any] = {
                "run": name,
                "group": group,
                "families": figures.families,
                "unpooled_documents": sum(
                    1
                    for q, docs in scored[name].items()
                    for d in ranking_order(docs)[: config.depth]
                    if d not in set(pooled.get(q, ()))
                ),
                "full": {
                    "map": full[name],
                    "pool_map": pool_truth[name],
                    "reachable_map": _reachable_map(
                        full_qrels, pooled, scored[name], config.depth
                    ),
                },
            }
            for estimator in ESTIMATORS:
                found = held_out(name, full=full, estimated=estimated[estimator])
                rows[estimator].append(found)
                row["full"]["rank"] = found.full_rank
                row[estimator] = {
                    "map": found.score,
                    "rank": found.rank,
                    "rank_error": found.rank_error,
                    "rel_error": found.rel_error,
                }
            row[DEFAULT_ESTIMATOR]["ci"] = list(evaluation.estimates[name].ap.ci95)
            parts = evaluation.intervals.get(name)
            if parts is not None:
                row[DEFAULT_ESTIMATOR]["var_sampling"] = parts.var_sampling
                row[DEFAULT_ESTIMATOR]["var_model"] = parts.var_model
            if name in topped:
                row["top_up"] = topped[name]
            per_run.append(row)
        unpooled[group] = _calibration(extra, evaluation.unpooled_p, truth)
        cal = evaluation.calibration
        if cal is not None:
            calibrated = {
                (q, d): cal.apply(evaluation.unpooled_p.get(q, {}).get(d, 0.0))
                for q, ds in extra.items()
                for d in ds
            }
            unpooled[group]["calibrated_relevant"] = math.fsum(calibrated.values())
            unpooled[group]["calibrated_relevant_judged"] = math.fsum(
                v for (q, d), v in calibrated.items() if d in truth.get(q, {})
            )
            unpooled[group]["ratio"] = cal.ratio
            unpooled[group]["ratio_sd"] = math.sqrt(cal.var)
            unpooled[group]["unique_judged"] = float(cal.evidence.judged)
            unpooled[group]["unique_sum_p"] = cal.evidence.sum_p
            unpooled[group]["unique_weighted_relevant"] = cal.evidence.weighted_relevant
        # The next group replaces the simulated assessor's judgments: this job's
        # figures are read, so it goes rather than stay with changed labels.
        job.delete()
        timings[group] = round(time.perf_counter() - started, 3)
        say(f"held out {group} ({len(names)} runs): {timings[group]:.1f}s")
    return {
        "mode": mode,
        "groups": held_groups,
        "default_estimator": DEFAULT_ESTIMATOR,
        "full": {
            "map": full,
            "pool_map": pool_truth,
            "relevant": relevant,
            "topics": sorted(full_qrels),
        },
        "reusability": {e: reusability_summary(rows[e], full) for e in ESTIMATORS},
        "runs": per_run,
        "unpooled": unpooled,
        "pooled_rel_error": pooled_errors,
        "pooled_rel_error_pool": pooled_errors_pool,
        "timings": timings,
    }


def _reachable_map(
    qrels: Labels, pooled: Mapping[str, list[str]], run: Scores, depth: int
) -> float:
    """The run's MAP had every document of the experiment's pool and of its own list
    down to ``depth`` been judged, and none other: the ceiling of any estimate that
    sees only those documents."""
    mine = _top(run, depth)
    seen = {q: set(pooled.get(q, ())) | set(mine.get(q, ())) for q in qrels}
    return _map(_relevant_within(qrels, seen), run)


def _top_up(
    *,
    job: MatchJob,
    sample,
    held: Runs,
    kept: Runs,
    evaluation,
    truth: Mapping[str, Mapping[str, int]],
    draws: int,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """Each held-out run's top-up: ``draws`` draws per topic of its scored unpooled
    documents (:func:`nuggets_app.ir.outside_pool.top_up_draw`), judged from the qrels
    as the simulated assessor judges, and the run estimated again through
    :func:`new_runs_evaluate` (``{run: {documents, topics, model_assisted: {map,
    ci}}}``)."""
    rng = random.Random(seed)
    depth = evaluation.depth
    judged: dict[str, dict[str, dict[str, tuple[int, float]]]] = {}
    for name in sorted(held):
        for qid in sorted(held[name], key=topic_key):
            ranking = ranked(held[name][qid], depth)
            scored = evaluation.unpooled_p.get(qid, {})
            draw = top_up_draw(ranking, [d for d in ranking if d in scored], draws, rng)
            if draw is None:
                continue
            judged.setdefault(name, {})[qid] = {
                d: (truth.get(qid, {}).get(d, 0), draw.inclusion[d]) for d in draw.order
            }
    again = new_runs_evaluate(
        job=job,
        sample=sample,
        new_runs=held,
        pooled_runs=kept,
        inline_max=10**9,
        top_ups=judged,
    )
    assert again.estimates is not None
    out = {}
    for name in held:
        ap = again.estimates[name].ap
        docs = judged.get(name, {})
        out[name] = {
            "documents": sum(len(d) for d in docs.values()),
            "topics": len(docs),
            "model_assisted": {"map": ap.estimate, "ci": list(ap.ci95)},
        }
    return out


def config_dict(config: SimulationConfig) -> dict[str, Any]:
    """The parameters a reusability report records."""
    return {
        "depth": config.depth,
        "sample_size": config.sample_size,
        "sample_fraction": config.sample_fraction,
        "seed": config.seed,
        "inference": config.inference,
        "nuggets": config.nuggets,
        "k": config.k,
        "lam": config.lam,
        "relevance_level": config.relevance_level,
        "ablate": list(config.ablate),
        "semantic": config.semantic,
        "nugget_choice": config.nugget_choice,
    }
