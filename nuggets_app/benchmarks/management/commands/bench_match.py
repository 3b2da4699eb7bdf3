"""``manage.py bench_match``: matching-job throughput with one and two worker processes,
the time to re-apply a new lambda and a new threshold to the whole job, and the time
to refit the relevance model and apply rules on p (no document is read).

Generates a pool (default 50 topics x 2,000 documents, 80 nuggets per topic taken from
the topic's document sentences), runs the same job on a Celery worker subprocess with
``--concurrency=1`` and then ``--concurrency=2``, and prints documents per second for
each and the speed-up. Needs DATABASE_URL and REDIS_URL, and no other worker consuming
the queue. The generated collection is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from matcher import NuggetSpec, TopicMatcher, default_stopwords
from nuggets_app.benchmarks.celery_processes import (
    celery_process,
    celery_stop,
    worker_args,
)
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.job_model import job_inference, job_model_fit
from nuggets_app.inference.services.matching import match_job_launch, match_job_rescore
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.inference.services.rule_estimates import rule_estimate
from nuggets_app.models import (
    Collection,
    Document,
    Judgment,
    MatchJob,
    MatchResult,
    Nugget,
    Pool,
    PoolDocument,
    Sample,
    SampleDocument,
    Topic,
)

SYLLABLES = ["ka", "ri", "to", "me", "su", "la", "no", "vi", "de", "pa"]
SYLLABLES += ["ro", "ti", "ne", "ma", "lu", "se", "fo", "gi", "ba", "te"]


def _vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    words = set()
    while len(words) < size:
        n = int(rng.integers(2, 5))
        words.add("".join(rng.choice(SYLLABLES, n)))
    return sorted(words)


class Command(BaseCommand):
    help = (
        "Benchmark matching jobs on 1 and 2 worker processes, and job-wide re-scoring."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--topics", type=int, default=50)
        parser.add_argument(
            "--docs", type=int, default=100_000, help="documents in all"
        )
        parser.add_argument("--nuggets", type=int, default=80, help="nuggets per topic")
        parser.add_argument("--words", type=int, default=150, help="words per document")
        parser.add_argument("--chunk-size", type=int, default=500)
        parser.add_argument("--workers", default="1,2", help="worker counts to run")
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument(
            "--judged",
            type=float,
            default=0.02,
            help="share of each topic's documents judged before the refit (0.02)",
        )
        parser.add_argument(
            "--keep", action="store_true", help="keep the generated data"
        )

    def handle(self, *args, **options) -> None:
        if not settings.REDIS_URL or settings.DATABASES["default"]["ENGINE"].endswith(
            "sqlite3"
        ):
            raise CommandError(
                "bench_match needs DATABASE_URL (PostgreSQL) and REDIS_URL"
            )
        settings.MATCH_CHUNK_SIZE = options["chunk_size"]
        started = time.perf_counter()
        collection, topics, pool = self._generate(options)
        docs = PoolDocument.objects.filter(pool=pool).count()
        self.stdout.write(
            f"generated {docs} pooled documents, {len(topics)} topics, "
            f"{options['nuggets']} nuggets per topic in {time.perf_counter() - started:.1f}s"
        )
        try:
            baseline = _cpu_baseline(topics[0])
            self.stdout.write(
                "machine baseline (the matcher alone, in memory, no database): "
                f"1 process {baseline[1]:.0f} documents/s, 2 processes "
                f"{baseline[2]:.0f} documents/s = {baseline[2] / baseline[1]:.2f}x"
            )
            rates = {}
            job = None
            for workers in [int(w) for w in options["workers"].split(",")]:
                if job is not None:
                    job.delete()  # each run writes into an equally empty results table
                job, seconds = self._run(collection, topics, pool, workers)
                rates[workers] = docs / seconds
                busy = sum(
                    (c.finished_at - c.started_at).total_seconds()
                    for c in job.chunks.all()
                )
                self.stdout.write(
                    f"{workers} worker process(es): {docs} documents in {seconds:.1f}s = "
                    f"{rates[workers]:.0f} documents/s (chunks busy {busy:.1f}s in all)"
                )
            if 1 in rates and 2 in rates:
                self.stdout.write(
                    f"speed-up with 2 workers: {rates[2] / rates[1]:.2f}x "
                    f"(machine baseline {baseline[2] / baseline[1]:.2f}x)"
                )
            self._rescore(job)
            self._refit(job, options)
        finally:
            if not options["keep"]:
                self._delete(collection)

    def _generate(self, options):
        rng = np.random.default_rng(options["seed"])
        # Zipf-like word frequencies with real stopwords as the most frequent words
        # (as in English text), plus a topic-specific vocabulary per topic.
        stop = sorted(default_stopwords())
        vocab = np.array(stop + _vocabulary(rng, 30_000))
        weights = 1.0 / np.arange(1, len(vocab) + 1)
        weights /= weights.sum()
        user, _ = get_user_model().objects.get_or_create(username="bench-assessor")
        name = f"bench-match-{uuid.uuid4().hex[:6]}"
        per_topic = max(1, options["docs"] // options["topics"])
        with transaction.atomic():
            collection = Collection.objects.create(name=name)
            pool = Pool.objects.create(
                collection=collection, name="bench", depth=per_topic
            )
            topics = []
            for t in range(options["topics"]):
                topic = Topic.objects.create(collection=collection, qid=str(t + 1))
                topics.append(topic)
                self._topic_docs(
                    rng,
                    vocab,
                    weights,
                    collection,
                    pool,
                    topic,
                    user,
                    per_topic,
                    options,
                )
        return collection, topics, pool

    def _topic_docs(
        self, rng, vocab, weights, collection, pool, topic, user, n, options
    ):
        own = rng.choice(len(vocab), 300, replace=False)
        mixed = weights.copy()
        mixed[own] += 0.3 / len(own)
        mixed /= mixed.sum()
        words = vocab[rng.choice(len(vocab), size=(n, options["words"]), p=mixed)]
        docs = []
        for i, row in enumerate(words):
            sentences = [" ".join(row[j : j + 15]) for j in range(0, len(row), 15)]
            text = " . ".join(sentences) + " ."
            docs.append(
                Document(
                    collection=collection,
                    docno=f"T{topic.qid}-D{i:05d}",
                    text=text,
                    length_words=len(row),
                    length_chars=len(text),
                )
            )
        Document.objects.bulk_create(docs, batch_size=5000)
        PoolDocument.objects.bulk_create(
            [
                PoolDocument(
                    pool=pool, topic=topic, document=d, best_rank=i + 1, num_runs=1
                )
                for i, d in enumerate(docs)
            ],
            batch_size=5000,
        )
        nuggets = []
        for d in rng.choice(
            len(docs), options["nuggets"], replace=len(docs) < options["nuggets"]
        ):
            doc = docs[int(d)]
            sentence = int(rng.integers(0, max(1, options["words"] // 15)))
            start = 0
            for _ in range(sentence):
                start = doc.text.index(" . ", start) + 3
            end = doc.text.index(" .", start)
            nuggets.append(
                Nugget(
                    topic=topic,
                    assessor=user,
                    document=doc,
                    start=start,
                    end=end,
                    span_text=doc.text[start:end],
                    text=doc.text[start:end],
                    grade=1,
                )
            )
        Nugget.objects.bulk_create(nuggets)

    def _run(self, collection, topics, pool, workers: int) -> tuple[MatchJob, float]:
        proc = _start_worker(workers)
        try:
            started = time.perf_counter()
            job = match_job_launch(
                collection=collection, topics=topics, source="pool", pool=pool
            )
            while True:
                job.refresh_from_db()
                if job.status in ("done", "failed", "cancelled"):
                    break
                time.sleep(0.5)
            seconds = time.perf_counter() - started
        finally:
            celery_stop(proc)
        if job.status != "done":
            raise CommandError(f"job {job.pk} {job.status}: {job.error}")
        return job, seconds

    def _rescore(self, job: MatchJob) -> None:
        summary = match_job_rescore(job=job, lam=0.7)
        self.stdout.write(
            f"re-score with a new lambda: {summary.results} results "
            f"({summary.changed} changed) in {summary.seconds:.2f}s"
        )
        started = time.perf_counter()
        decided = rule_apply(job=job, rule=DecisionRule(threshold=0.4))
        inferred = sum(sum(d.values()) for d in decided.values())
        rule_estimate(job=job, rule=DecisionRule(threshold=0.4))
        self.stdout.write(
            f"new threshold over the whole job: {inferred} inferred relevant, "
            f"with estimates, in {time.perf_counter() - started:.2f}s"
        )

    def _refit(self, job: MatchJob, options) -> None:
        """Judge ``--judged`` of each topic's documents (synthetic labels: a high
        min-span score, 10% flipped), then time refits and rules on p against the
        paper rule over the same job."""
        rng = np.random.default_rng(options["seed"])
        user = get_user_model().objects.get(username="bench-assessor")
        judgments = []
        # The judged documents are a uniform sample of each topic's pool, recorded as
        # the job's sample: the refit is then anchored to its Horvitz-Thompson
        # estimate, as the fit of a job over a judged sample is.
        sample = Sample.objects.create(
            pool=job.pool,
            name=f"bench-judged-{uuid.uuid4().hex[:8]}",
            method=Sample.Method.UNIFORM,
            size=0,
            seed=options["seed"],
        )
        drawn = []
        for topic_id in job.topics.values_list("pk", flat=True):
            rows = list(
                MatchResult.objects.filter(job=job, topic_id=topic_id).values_list(
                    "document_id", "score"
                )
            )
            cut = float(np.median([s for _, s in rows])) if rows else 0.0
            n = min(max(4, int(len(rows) * options["judged"])), len(rows))
            for order, i in enumerate(rng.choice(len(rows), n, replace=False), 1):
                doc_id, score = rows[int(i)]
                relevant = (score > cut) != (rng.random() < 0.1)
                judgments.append(
                    Judgment(
                        topic_id=topic_id,
                        document_id=doc_id,
                        assessor=user,
                        relevance=int(relevant),
                    )
                )
                drawn.append(
                    SampleDocument(
                        sample=sample,
                        topic_id=topic_id,
                        document_id=doc_id,
                        order=order,
                        inclusion_prob=n / len(rows),
                    )
                )
            sample.size = max(sample.size, n)
        Judgment.objects.bulk_create(judgments, batch_size=5000)
        SampleDocument.objects.bulk_create(drawn, batch_size=5000)
        sample.save(update_fields=["size"])
        job.sample = sample
        job.save(update_fields=["sample"])
        started = time.perf_counter()
        rule_apply(job=job, rule=DecisionRule(kind="threshold", threshold=0.4))
        paper = time.perf_counter() - started
        timings = {}
        started = time.perf_counter()
        job_model_fit(job=job, reliability=False)
        timings["first fit in this process"] = time.perf_counter() - started
        for label, reliability in (("refit", False), ("refit + reliability", True)):
            started = time.perf_counter()
            summary = job_model_fit(job=job, reliability=reliability)
            timings[label] = time.perf_counter() - started
            if not reliability:
                timings["  of which the model's own fit and predict"] = (
                    summary.model_seconds
                )
        for label, rule in (
            ("rule p >= 0.5", DecisionRule(kind="probability", threshold=0.5)),
            ("rule expected F1", DecisionRule(kind="expected_f1")),
            ("rule top 100 by p", DecisionRule(kind="top_n", n=100)),
        ):
            started = time.perf_counter()
            rule_apply(job=job, rule=rule)
            timings[label] = time.perf_counter() - started
        fitted = job_inference(job)
        estimate = fitted.fit_info.get("pool_relevant") if fitted else None
        shift = fitted.model.get("shift", 0.0) if fitted else 0.0
        self.stdout.write(
            f"relevance model over {summary.documents} documents, {summary.judged} "
            f"judged ({summary.relevant} relevant), anchored to the judged sample's "
            f"Horvitz-Thompson estimate ({estimate or 0:.0f} relevant, logit shift "
            f"{shift:+.3f}); "
            "no document text read; baseline "
            f"= the paper rule over the same job ({paper:.3f}s):"
        )
        for label, seconds in timings.items():
            self.stdout.write(
                f"  {label}: {seconds:.3f}s "
                f"({summary.documents / seconds:,.0f} documents/s, "
                f"{seconds / paper:.2f}x the paper rule)"
            )

    def _delete(self, collection: Collection) -> None:
        with transaction.atomic():
            Nugget.objects.filter(topic__collection=collection).delete()
            Judgment.objects.filter(topic__collection=collection).delete()
            collection.delete()


def _score_all(payload: tuple[list, list[str]]) -> int:
    specs, texts = payload
    matcher = TopicMatcher(specs)
    for text in texts:
        matcher.score(text)
    return len(texts)


def _cpu_baseline(topic: Topic) -> dict[int, float]:
    """Documents/s of the bare matcher in 1 and 2 processes: how much a second core
    can give on this machine right now (other load included)."""
    from concurrent.futures import ProcessPoolExecutor

    specs = [
        NuggetSpec(id=str(n.pk), text=n.text)
        for n in Nugget.objects.filter(topic=topic)
    ]
    texts = list(
        PoolDocument.objects.filter(topic=topic).values_list(
            "document__text", flat=True
        )[:400]
    )
    rates = {}
    for procs in (1, 2):
        with ProcessPoolExecutor(procs) as pool:
            list(pool.map(_score_all, [(specs, texts[:10])] * procs))  # warm up
            started = time.perf_counter()
            done = sum(pool.map(_score_all, [(specs, texts)] * (2 * procs)))
            rates[procs] = done / (time.perf_counter() - started)
    return rates


def _start_worker(concurrency: int) -> subprocess.Popen:
    log = Path(settings.DATA_DIR) / f"bench-worker-{concurrency}.log"
    log.unlink(missing_ok=True)  # this run's log only
    proc = celery_process(
        worker_args(concurrency, f"bench-{uuid.uuid4().hex[:6]}"), log, "WARNING"
    )
    time.sleep(4)  # the worker connects to the broker before the job is launched
    if proc.poll() is not None:
        raise CommandError(f"the worker exited; see {log}")
    return proc
