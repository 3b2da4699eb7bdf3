"""The nugget paradigm end to end with a simulated assessor, and runs to pool.

:func:`simulation_run` builds the depth pool of the runs, draws a statAP sample, lets
the simulated assessor judge the sampled documents from the qrels (Judgment rows of the
user ``simulated-assessor``) and extract nuggets from the relevant ones (Nugget rows;
strategy in :mod:`lab.maths.simulation`), runs a matching job over the pool
through the jobs service, and returns everything the report needs
(:mod:`lab.services.simulation_report` turns it into numbers and files).

Runs to pool come from :mod:`nuggets_app.collection.services.suite_runs`.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from django.db import transaction

from lab.maths.simulation import (
    SimulationError,
    rule_parse,
)
from lab.services.simulation_config import (
    SimulationConfig,
)
from lab.services.simulation_job import (
    JobFigures,
    job_fit_and_figures,
)
from lab.services.simulation_judges import simulation_judges
from lab.services.simulation_nuggets import (
    nuggets_extract_human,
    nuggets_extract_simulated,
)
from nuggets_app.collection.services.suite_runs import (
    document_texts,
    qrels_read,
    runs_scores,
    topic_queries,
)
from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.matching import (
    MatchParams,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.inference.services.rule_fitting import rule_fit
from nuggets_app.learning import retrieval
from nuggets_app.learning.thresholds import expected_f1_threshold
from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    Judgment,
    MatchJob,
    MatchResult,
    Nugget,
    Pool,
    PoolDocument,
    Run,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.pooling.selectors import sample_design, sample_inclusion_by_topic
from nuggets_app.pooling.services.pools import pool_build, qid_sort_key
from nuggets_app.pooling.services.samples import sample_draw
from nuggets_app.pooling.services.simulated_assessors import simulated_user

INFERENCES = ("model", "paper")
Progress = Callable[[str], None]
Labels = dict[str, dict[str, int]]
Scores = dict[str, dict[str, float]]


@dataclass
class SimulationData:
    """What a simulation produced, keyed by qid and docno (input of the report)."""

    config: SimulationConfig
    collection: str
    sample_size: int
    runs: dict[str, Scores]
    pool: dict[str, list[str]]
    sample: dict[str, dict[str, float]]
    human: Labels
    truth: Labels
    nuggets: dict[str, int]
    keyword_nuggets: int
    scores: Scores
    inferred: dict[str, set[str]]
    baseline: Scores
    doc_words: dict[str, int]
    timings: dict[str, float] = field(default_factory=dict)
    # The relevance model's probability of every pooled document ("model" inference)
    # and its cross-fitted p (nuggets_app.learning.crossfit).
    probabilities: Scores | None = None
    model: dict[str, Any] | None = None
    crossfit: Scores | None = None
    # The feature families the job's model kept (lab.services.simulation_job).
    families: dict[str, Any] | None = None
    # The product's own figures for the job and sample (the one path): the sample's
    # prels, the estimates of ``evaluate --job`` and the probabilistic qrels of EAP.
    job_id: int | None = None
    sample_name: str = ""
    prels: dict[str, Any] | None = None
    estimates: dict[str, Any] | None = None
    expected_qrels: Scores | None = None
    design: Scores | None = None  # π of every pooled document (pooling.selectors)
    # Topics the runs answer but the qrels do not hold: never assessed, left out.
    topics_without_qrels: list[str] = field(default_factory=list)

    def inference_scores(self) -> Scores:
        """What the inference ranks the pool by: probabilities, else matcher scores."""
        return self.probabilities if self.probabilities is not None else self.scores

    def merged(self) -> Labels:
        """Binary verdict on every pooled document: the human label where judged,
        else the inference (a human label always wins)."""
        level = self.config.relevance_level
        verdicts: Labels = {}
        for qid, docnos in self.pool.items():
            judged = self.human.get(qid, {})
            inferred = self.inferred.get(qid, set())
            verdicts[qid] = {
                d: int(judged[d] >= level) if d in judged else int(d in inferred)
                for d in docnos
            }
        return verdicts


D = TypeVar("D", bound=SimulationData)


def _names_digest(names: Iterable[str]) -> str:
    """A short digest of a set of names (run names, qids) for a pool's name."""
    return hashlib.sha1("\n".join(sorted(names)).encode()).hexdigest()[:8]


def simulation_pool(
    collection: Collection, runs: list[Run], config: SimulationConfig, truth: Labels
) -> Pool:
    """The depth pool of ``runs`` over the topics the qrels judge.

    A topic the qrels do not hold was never assessed (CACM and CISI list queries
    without judgments): its truth is unknown, not "no relevant document", so it is
    neither judged by the simulated assessor, fitted on, nor evaluated (trec_eval and
    ir_measures leave such topics out too)."""
    runs_digest = _names_digest(run.name for run in runs)
    return pool_build(
        collection=collection,
        runs=runs,
        depth=config.depth,
        name=f"sim-depth{config.depth}-{runs_digest}-q{_names_digest(truth)}",
        topics=sorted(truth),
    )


def judged_topics_only(
    run_scores: dict[str, Scores], truth: Labels
) -> tuple[dict[str, Scores], list[str]]:
    """The runs cut to the topics the qrels hold, and the topics cut (in qid order)."""
    answered = {qid for per_topic in run_scores.values() for qid in per_topic}
    kept = {
        name: {qid: docs for qid, docs in per_topic.items() if qid in truth}
        for name, per_topic in run_scores.items()
    }
    return kept, sorted(answered - set(truth), key=qid_sort_key)


def _pool_and_sample(
    collection: Collection, runs: list[Run], config: SimulationConfig, truth: Labels
) -> tuple[Pool, Sample]:
    pool = simulation_pool(collection, runs, config, truth)
    size = config.sample_size
    if config.sample_fraction is not None:
        sizes = [len(d) for d in _pool_docnos(pool).values()]
        size = max(1, round(config.sample_fraction * sum(sizes) / max(len(sizes), 1)))
    sample = sample_draw(
        pool=pool,
        size=size,
        method=Sample.Method.STATAP,
        seed=config.seed,
        name=f"sim-statap-n{size}-seed{config.seed}",
    )
    return pool, sample


def _assessor(username: str):
    return simulated_user(username)


def dependent_jobs(collection: Collection, assessor) -> list[MatchJob]:
    """The jobs of ``collection`` fitted while ``assessor`` had judgments in it: a new
    simulation would change their figures by replacing those judgments."""
    if not Judgment.objects.filter(
        assessor=assessor, topic__collection=collection
    ).exists():
        return []
    return list(
        MatchJob.objects.filter(
            collection=collection, inference__fitted_at__isnull=False
        ).order_by("pk")
    )


def simulation_check(collection: Collection, config: SimulationConfig) -> None:
    """Refuse (naming the jobs) a simulation that would change the judgments earlier
    jobs were fitted on, unless ``config.replace``: then those jobs are deleted."""
    assessor = _assessor(config.assessor)
    jobs = dependent_jobs(collection, assessor)
    if not jobs:
        return
    names = ", ".join(f"job {j.pk}" for j in jobs)
    if not config.replace:
        raise SimulationError(
            f"the simulated assessor {assessor.username!r} already judged documents "
            f"of {collection.name} that {names} were fitted on; a new simulation "
            "would replace those judgments and change their figures. Use another "
            "--assessor, or --replace to delete those jobs and judgments first"
        )
    MatchJob.objects.filter(pk__in=[j.pk for j in jobs]).delete()


def _judge(sample: Sample, truth: Labels, assessor) -> Labels:
    """Judgment rows for every sampled document, labelled from the qrels (0 if absent).

    The simulated assessor's earlier work on this collection is replaced (after
    :func:`simulation_check`), so a new simulation never mixes in nuggets of another
    sample.
    """
    collection = sample.pool.collection
    rows = SampleDocument.objects.filter(sample=sample).values_list(
        "topic_id", "topic__qid", "document_id", "document__docno"
    )
    human: Labels = {}
    judgments = []
    topic_ids = set()
    for topic_id, qid, document_id, docno in rows:
        grade = truth.get(qid, {}).get(docno, 0)
        human.setdefault(qid, {})[docno] = grade
        topic_ids.add(topic_id)
        judgments.append(
            Judgment(
                topic_id=topic_id,
                document_id=document_id,
                assessor=assessor,
                relevance=grade,
            )
        )
    with transaction.atomic():
        Nugget.objects.filter(assessor=assessor, topic__collection=collection).delete()
        Judgment.objects.filter(
            assessor=assessor, topic__collection=collection
        ).delete()
        Judgment.objects.bulk_create(judgments, batch_size=1000)
        Assignment.objects.bulk_create(
            [
                Assignment(sample=sample, topic_id=t, assessor=assessor)
                for t in topic_ids
            ],
            ignore_conflicts=True,
        )
    return human


@contextlib.contextmanager
def _inline_tasks() -> Iterator[None]:
    """Run the job's chunk tasks in this process, whatever broker is configured."""
    from nuggets_app.celery import app

    before = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = before


def _match(
    collection: Collection,
    pool: Pool,
    qids: Iterable[str],
    assessor,
    config: SimulationConfig,
) -> MatchJob:
    """A matching job over the pool (its relevance level the simulation's), run
    in-process, as ``manage.py match`` launches one."""
    topics = list(Topic.objects.filter(collection=collection, qid__in=list(qids)))
    with _inline_tasks():
        job = match_job_launch(
            collection=collection,
            topics=topics,
            source=MatchJob.Source.POOL,
            pool=pool,
            name=f"simulation {pool.name} seed {config.seed}",
            params=MatchParams(
                nugget_filter={"assessors": [assessor.pk]},
                k=config.k,
                lam=config.lam,
                relevance_level=config.relevance_level,
            ),
        )
    job = match_job_finish_here(job)
    if job.status != MatchJob.Status.DONE:
        raise SimulationError(f"matching job {job.pk} ended {job.status}: {job.error}")
    return job


def decision_rule(
    rule: str, *, job: MatchJob | None = None, config: SimulationConfig | None = None
) -> DecisionRule:
    """``threshold:X``, ``top:N`` or ``fit:fB[:per-topic]`` as the inference service's
    rule. A fitted rule needs the matching ``job`` and ``config``: it is fitted on the
    simulated assessor's judgments of documents that are no nugget's source."""
    kind, value = rule_parse(rule)
    if kind == "top":
        return DecisionRule(kind="top_n", n=int(value))
    if kind in ("fit", "fit-per-topic"):
        if job is None or config is None:
            raise SimulationError(f"rule {rule}: a fitted rule needs the matching job")
        assessor = _assessor(config.assessor)
        return rule_fit(
            job=job,
            objective="f1" if value == 1.0 else "fbeta",
            scope="global" if kind == "fit" else "per-topic",
            beta=value,
            assessors=[assessor.pk],
            relevance_level=config.relevance_level,
        )
    return DecisionRule(kind="threshold", threshold=value)


def _job_outcome(
    job: MatchJob, rule: DecisionRule
) -> tuple[Scores, dict[str, set[str]]]:
    """Matcher scores per qid and docno, and the documents the rule infers relevant."""
    scores: Scores = {}
    names: dict[tuple[int, int], tuple[str, str]] = {}
    rows = MatchResult.objects.filter(job=job).values_list(
        "topic_id", "document_id", "topic__qid", "document__docno", "score"
    )
    for topic_id, doc_id, qid, docno, score in rows.iterator(chunk_size=5000):
        scores.setdefault(qid, {})[docno] = score
        names[(topic_id, doc_id)] = (qid, docno)
    inferred: dict[str, set[str]] = {}
    for topic_id, decided in rule_apply(job=job, rule=rule).items():
        for doc_id, relevant in decided.items():
            qid, docno = names[(topic_id, doc_id)]
            if relevant and scores[qid][docno] > 0:
                inferred.setdefault(qid, set()).add(docno)
    return scores, inferred


def model_inferred(
    probabilities: Scores, human: Labels, rule: str
) -> dict[str, set[str]]:
    """The unjudged pooled documents the rule calls relevant from their probabilities:
    ``threshold:X`` is ``p >= X``, ``top:N`` the N most probable per topic, ``fit:...``
    the threshold with the best expected F1 over all topics under the model's own
    probabilities (:func:`nuggets_app.learning.thresholds.expected_f1_threshold`)."""
    kind, value = rule_parse(rule)
    unjudged = {
        q: {d: p for d, p in docs.items() if d not in human.get(q, {})}
        for q, docs in probabilities.items()
    }
    if kind in ("fit", "fit-per-topic"):
        value = expected_f1_threshold(
            p for docs in unjudged.values() for p in docs.values()
        ).threshold
        kind = "threshold"
    inferred: dict[str, set[str]] = {}
    for qid, docs in unjudged.items():
        if kind == "top":
            ranked = sorted(docs, key=lambda d: (-docs[d], d))[: int(value)]
            chosen = {d for d in ranked if docs[d] > 0}
        else:
            chosen = {d for d, p in docs.items() if p >= value and p > 0}
        if chosen:
            inferred[qid] = chosen
    return inferred


def _pool_docnos(pool: Pool) -> dict[str, list[str]]:
    pooled: dict[str, list[str]] = {}
    rows = PoolDocument.objects.filter(pool=pool).values_list(
        "topic__qid", "document__docno"
    )
    for qid, docno in rows.iterator(chunk_size=5000):
        pooled.setdefault(qid, []).append(docno)
    return {qid: sorted(docnos) for qid, docnos in pooled.items()}


def _baseline(
    collection: Collection,
    pool: dict[str, list[str]],
    human: Labels,
    config: SimulationConfig,
) -> Scores:
    """BM25 with relevance feedback from the judged sample, scored over the pool."""
    index = retrieval.InvertedIndex.build(document_texts(collection))
    queries = dict(topic_queries(Topic.objects.filter(collection=collection)))
    scores: Scores = {}
    for qid, docnos in pool.items():
        relevant = [
            d for d, g in human.get(qid, {}).items() if g >= config.relevance_level
        ]
        values = retrieval.relevance_feedback_bm25(
            index,
            index.query(queries.get(qid, "")),
            relevant,
            expansion_terms=config.expansion_terms,
        )
        scores[qid] = {d: float(values[index.position[d]]) for d in docnos}
    return scores


def _doc_words(collection: Collection) -> dict[str, int]:
    rows = Document.objects.filter(collection=collection).values_list("docno", "text")
    return {docno: len(text.split()) for docno, text in rows.iterator(chunk_size=5000)}


def simulation_run(
    *,
    collection: Collection,
    qrels_path: str | Path,
    runs: Iterable[Run],
    config: SimulationConfig,
    progress: Progress | None = None,
) -> SimulationData:
    """Pool, sample, simulated judging and nuggets, matching, inference and baseline."""
    say = progress or (lambda message: None)
    runs = sorted(runs, key=lambda r: r.name)
    if not runs:
        raise SimulationError(f"collection {collection.name} has no runs to pool")
    rule_parse(config.rule)  # rejects a bad rule before any work
    if config.semantic and config.inference != "model":
        raise SimulationError("--semantic: the semantic features are the model's")
    if config.inference not in INFERENCES:
        raise SimulationError(
            f"inference must be one of {', '.join(INFERENCES)}, got {config.inference!r}"
        )
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 3)
        clock = now
        say(f"{name}: {timings[name]:.1f}s")

    truth = qrels_read(qrels_path)
    simulation_check(collection, config)
    pool, sample = _pool_and_sample(collection, runs, config, truth)
    pooled = _pool_docnos(pool)
    lap("pool and sample")
    assessor = _assessor(config.assessor)
    human = _judge(sample, truth, assessor)
    extract = (
        nuggets_extract_human
        if config.nuggets == "human"
        else nuggets_extract_simulated
    )
    nuggets, keyword_nuggets = extract(collection, human, assessor, config)
    lap("judging and nugget extraction")
    simulation_judges(collection=collection, pooled=pooled, truth=truth, config=config)
    job = _match(collection, pool, list(pooled), assessor, config)
    run_scores, left_out = judged_topics_only(runs_scores(runs), truth)
    figures: JobFigures | None = None
    if config.inference == "paper":
        rule = decision_rule(config.rule, job=job, config=config)
        say(f"rule {config.rule}: {rule.describe()} {rule.as_dict()}")
        scores, inferred = _job_outcome(job, rule)
        lap("matching")
    else:
        scores, _ = _job_outcome(job, DecisionRule(kind="threshold", threshold=1.0))
        lap("matching")
        figures = job_fit_and_figures(
            job=job, sample=sample, runs=run_scores, config=config
        )
        inferred = model_inferred(figures.probabilities, human, config.rule)
        lap("relevance model")
    baseline = (
        {} if config.inputs_only else _baseline(collection, pooled, human, config)
    )
    lap("baseline")
    data = simulation_data(
        config=config,
        collection=collection,
        sample=sample,
        run_scores=run_scores,
        pooled=pooled,
        human=human,
        truth=truth,
        nuggets=(nuggets, keyword_nuggets),
        job=job,
        outcome=(scores, inferred, baseline),
        timings=timings,
        figures=figures,
        kind=SimulationData,
        topics_without_qrels=left_out,
    )
    # The one path: the product's own prels, estimates and EAP qrels of the job.
    data.job_id, data.sample_name = job.pk, sample.name
    data.prels = figures.prels if figures else sample_prels(sample)
    data.estimates = figures.estimates if figures else None
    data.expected_qrels = figures.expected if figures else None
    data.design = sample_design(sample=sample)
    return data


def simulation_data(
    *,
    config: SimulationConfig,
    collection: Collection,
    sample: Sample,
    run_scores: dict[str, Scores],
    pooled: dict[str, list[str]],
    human: Labels,
    truth: Labels,
    nuggets: tuple[dict[str, int], int],
    job: MatchJob,
    outcome: tuple[Scores, dict[str, set[str]], Scores],
    timings: dict[str, float],
    figures: JobFigures | None,
    kind: type[D],
    **extra: Any,
) -> D:
    """The fields of the report's input that a one-shot simulation and one in rounds
    share, built once: ``outcome`` is (matcher scores, inferred, baseline), ``nuggets``
    (per-topic counts, keyword nuggets); ``kind`` is the class built and ``extra`` a subclass's own fields."""
    scores, inferred, baseline = outcome
    return kind(
        config=config,
        collection=collection.name,
        sample_size=sample.size,
        runs=run_scores,
        pool=pooled,
        sample=sample_inclusion_by_topic(sample=sample),
        human=human,
        truth=truth,
        nuggets=nuggets[0],
        keyword_nuggets=nuggets[1],
        scores=scores,
        inferred=inferred,
        baseline=baseline,
        doc_words=_doc_words(collection),
        timings=timings,
        probabilities=figures.probabilities if figures else None,
        model=figures.model if figures else None,
        crossfit=figures.crossfit if figures else None,
        families=figures.families if figures else None,
        **extra,
    )
