"""Benchmark of evaluating a new run against a finished job (issue 21).

Not a test. On full Cranfield (loaded from ``../shared/data/cranfield`` when missing),
the first run builds the world once: a depth-``--depth`` pool of every real run but
one, a statAP sample of 10% of the mean pool size judged from the qrels by the
simulated assessor, its nuggets, a matching job over the pool for ``--topics`` topics
and the job's relevance model. The new run has ``--per-topic`` documents per topic:
half from the pool, half from the collection outside it (the held-out run's documents
first), interleaved.

It prints: the cold evaluation of the new run (its unpooled documents matched and
their features computed, in this process, then the estimate), the warm evaluation
(the same run again: the stored scores are read, nothing is matched), and, beside
them, the evaluation of a pooled run by the same path and by the page's estimate of
pooled runs (``job_sample_estimates``). Target: warm < 10 s for 43 topics x 100
documents, half unpooled.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from lab.maths.simulation import ExtractionOptions
from lab.services.simulation import (
    SimulationConfig,
    _assessor,
    _judge,
    _match,
    _pool_and_sample,
)
from lab.services.simulation_nuggets import (
    nuggets_extract_simulated,
)
from nuggets_app.collection.services.imports import (
    collection_import,
    runs_import,
    topics_import,
)
from nuggets_app.collection.services.suite_runs import qrels_read
from nuggets_app.evaluation.selectors import run_scores
from nuggets_app.evaluation.services.estimates import job_sample_estimates
from nuggets_app.evaluation.services.new_runs import new_runs_evaluate
from nuggets_app.inference.services.job_model import job_model_fit
from nuggets_app.ir.prels import ranking_order
from nuggets_app.models import (
    Collection,
    MatchJob,
    PoolDocument,
    Run,
    UnpooledScore,
)

NAME = "bench-new-run"
HELD_OUT = "kidus-hw1-bm25"
NEW = "bench-new-system"


class Command(BaseCommand):
    help = "Evaluate a new run (half unpooled) against a finished job: cold and warm."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data", default="", help="Cranfield folder")
        parser.add_argument("--topics", type=int, default=43)
        parser.add_argument("--per-topic", type=int, default=100)
        parser.add_argument("--depth", type=int, default=100, help="pool depth")
        parser.add_argument("--repeat", type=int, default=3, help="warm evaluations")

    def handle(self, *args, **opts) -> None:
        data = (
            Path(opts["data"])
            if opts["data"]
            else (Path(settings.BASE_DIR).parent / "shared" / "data" / "cranfield")
        )
        collection = self._collection(data)
        job, sample = self._world(collection, data, opts)
        new = self._new_run(job, collection, opts["per_topic"])
        pooled_name = sorted(
            Run.objects.filter(pools=job.pool).values_list("name", flat=True)
        )[0]
        pooled = run_scores(Run.objects.get(collection=collection, name=pooled_name))
        pooled = {q: d for q, d in pooled.items() if q in new}
        retrieved = sum(len(d) for d in new.values())
        UnpooledScore.objects.filter(job=job).delete()
        started = time.perf_counter()
        found = new_runs_evaluate(
            job=job,
            sample=sample,
            new_runs={NEW: new},
            pooled_runs={},
            inline_max=10**9,
        )
        cold = time.perf_counter() - started
        counts = found.documents[NEW]
        warm = []
        for _ in range(opts["repeat"]):
            started = time.perf_counter()
            again = new_runs_evaluate(
                job=job, sample=sample, new_runs={NEW: new}, pooled_runs={}
            )
            warm.append(time.perf_counter() - started)
        if again.estimates is None:
            raise CommandError("the warm evaluation scored documents again")
        path_pooled = []
        page_pooled = []
        for _ in range(opts["repeat"]):
            started = time.perf_counter()
            new_runs_evaluate(
                job=job, sample=sample, new_runs={pooled_name: pooled}, pooled_runs={}
            )
            path_pooled.append(time.perf_counter() - started)
            started = time.perf_counter()
            job_sample_estimates(job=job, sample=sample, runs={pooled_name: pooled})
            page_pooled.append(time.perf_counter() - started)
        est = again.estimates[NEW].ap
        self.stdout.write(
            f"job {job.pk}: {len(new)} topics, new run of {retrieved} documents "
            f"({counts.pooled} pooled, {counts.unpooled} unpooled, "
            f"{counts.not_in_collection} not in the collection); maAP {est.estimate:.4f} "
            f"[{est.ci95[0]:.4f}, {est.ci95[1]:.4f}] over {est.n_topics} topics"
        )
        self.stdout.write(
            f"new run, cold (match and score {counts.unpooled}): {cold:.2f} s"
        )
        self.stdout.write(
            f"new run, warm (stored scores): {statistics.median(warm):.2f} s "
            f"(median of {len(warm)}: {', '.join(f'{w:.2f}' for w in warm)})"
        )
        self.stdout.write(
            f"pooled run {pooled_name}, same path: {statistics.median(path_pooled):.2f} s; "
            f"pooled estimate (job_sample_estimates): {statistics.median(page_pooled):.2f} s"
        )

    def _collection(self, data: Path) -> Collection:
        found = Collection.objects.filter(name=NAME).first()
        if found is not None and Run.objects.filter(collection=found).exists():
            return found
        if not (data / "docs.jsonl.gz").is_file():
            raise CommandError(f"no Cranfield data at {data} (use --data)")
        self.stdout.write(f"loading Cranfield from {data} (once) ...")
        collection_import(path=data / "docs.jsonl.gz", name=NAME)
        topics_import(path=data / "topics.jsonl", collection=NAME)
        runs_import(paths=sorted((data / "runs").glob("*.run.gz")), collection=NAME)
        return Collection.objects.get(name=NAME)

    def _world(self, collection: Collection, data: Path, opts: dict):
        """The finished, fitted job over the pool of every run but ``HELD_OUT``."""
        name = f"bench new run {opts['depth']} {opts['topics']}"
        job = MatchJob.objects.filter(
            collection=collection, name=name, status=MatchJob.Status.DONE
        ).first()
        if job is not None and job.pool_id is not None:
            sample = job.pool.samples.order_by("pk").first()
            if sample is not None:
                return job, sample
        self.stdout.write(
            "building the pool, sample, judgments, nuggets and job (once) ..."
        )
        config = SimulationConfig(
            depth=opts["depth"],
            sample_size=0,
            sample_fraction=0.1,
            seed=1,
            extraction=ExtractionOptions(),
        )
        runs = list(Run.objects.filter(collection=collection).exclude(name=HELD_OUT))
        truth = qrels_read(data / "qrels.txt")
        pool, sample = _pool_and_sample(collection, runs, config, truth)
        assessor = _assessor(config.assessor)
        human = _judge(sample, truth, assessor)
        nuggets, _ = nuggets_extract_simulated(collection, human, assessor, config)
        # The first topics (by qid) that have nuggets.
        qids = sorted((q for q, n in nuggets.items() if n), key=int)[: opts["topics"]]
        job = _match(collection, pool, qids, assessor, config)
        MatchJob.objects.filter(pk=job.pk).update(name=name)
        job.refresh_from_db()
        job_model_fit(job=job, reliability=False)
        return job, sample

    def _new_run(self, job: MatchJob, collection: Collection, per_topic: int):
        """Half pooled documents, half from outside the pool, interleaved."""
        held = run_scores(Run.objects.get(collection=collection, name=HELD_OUT))
        pooled: dict[str, list[str]] = {}
        rows = PoolDocument.objects.filter(
            pool=job.pool, topic__in=job.topics.all()
        ).order_by("best_rank", "document__docno")
        for qid, docno in rows.values_list("topic__qid", "document__docno"):
            pooled.setdefault(qid, []).append(docno)
        every = list(
            collection.documents.order_by("pk").values_list("docno", flat=True)
        )
        run: dict[str, dict[str, float]] = {}
        half = per_topic // 2
        for qid, docs in pooled.items():
            inside = docs[:half]
            known = set(docs)
            outside = [d for d in ranking_order(held.get(qid, {})) if d not in known]
            outside += [d for d in every if d not in known and d not in outside]
            ranked = [
                d for pair in zip(inside, outside[:half], strict=False) for d in pair
            ]
            run[qid] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
        return run
