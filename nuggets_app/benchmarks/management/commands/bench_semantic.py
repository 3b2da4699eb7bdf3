"""``manage.py bench_semantic``: the semantic extra's cost on this machine.

Reads ``--limit`` passages (JSONL, maybe gzipped, with ``text``) and measures:

1. embedding speed: passages per second of the packaged model in this process (the
   model's load time apart), batch ``--batch-size``, on ``--threads`` threads (one per
   core by default), in wall-clock time and per CPU-second of the process's threads
   (what counts on a machine shared with other work); against the baseline of the
   same run: the first ``--reference`` passages through the reference forward pass
   (scipy's erf, one thread), with the agreement of the two (the smallest cosine
   similarity of a passage's two embeddings); and as a share of the FLOP ceiling: the
   model's useful floating-point operations per second (matrix products over the
   passages' real tokens) against a float32 matrix product of the model's largest
   shape on every core, measured in the same run;
2. storage: the passages stored as a throwaway collection, embedded through the
   service a worker runs (``documents_embed``), then the table's size on disk per
   stored unit (PostgreSQL's ``pg_total_relation_size``, rows and index) and per
   million units;
3. the effect on a matching job: min-span matching of the same passages against
   ``--nuggets`` nuggets cut from them (the matcher's own work in a job's chunks)
   against the time to embed them, once, for every later job.

The throwaway collection is deleted at the end. Needs the extra and, for 2, a
PostgreSQL ``DATABASE_URL`` (on SQLite the storage line is skipped).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from matcher import NuggetSpec, TopicMatcher
from nuggets_app.inference.services.embeddings import documents_embed
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS, text_windows
from nuggets_app.models import Collection, Document, UnitEmbedding


def _texts(path: Path, limit: int) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[str] = []
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        for line in handle:
            text = json.loads(line).get("text", "").strip()
            if text:
                out.append(text)
            if len(out) >= limit:
                break
    return out


AGREEMENT = 0.999  # smallest cosine of a passage's two embeddings accepted


def _timed(encoder, texts: list[str], **options):
    """The embeddings, wall seconds and CPU seconds of ``encoder.embed``."""
    clock, cpu = time.perf_counter(), time.process_time()
    vectors = encoder.embed(texts, **options)
    return vectors, time.perf_counter() - clock, time.process_time() - cpu


def _passage_flop(tokens: int) -> float:
    """Floating-point operations of the model's matrix products on one passage of
    ``tokens`` tokens: per layer the query, key and value projections (384 x 1152),
    the attention's two products (tokens x tokens x 384 each), the output projection
    (384 x 384) and the feed-forward pair (384 x 1536 and back); 2 per multiply-add."""
    dim, hidden = embeddings.DIMENSION, 4 * embeddings.DIMENSION
    per_layer = 2 * tokens * dim * (3 * dim + dim + 2 * hidden) + 4 * tokens**2 * dim
    return float(6 * per_layer)


def _gemm_ceiling(rounds: int = 5) -> float:
    """Float32 operations per second of the model's largest product (4,096 token rows
    by 384 x 1536) with the BLAS on every core: best of ``rounds``."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.random((4096, embeddings.DIMENSION), dtype=np.float32)
    b = rng.random((embeddings.DIMENSION, 4 * embeddings.DIMENSION), dtype=np.float32)
    best = float("inf")
    # Every core, whatever the process's default (one BLAS thread, nuggets_app).
    with threadpool_limits(limits=os.cpu_count() or 1, user_api="blas"):
        for _ in range(rounds):
            clock = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - clock)
    return 2 * a.shape[0] * a.shape[1] * b.shape[1] / best


class Command(BaseCommand):
    help = "Benchmark the semantic extra: embedding speed, storage, matching-job cost."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("texts", type=Path, help="JSONL(.gz) of passages (text)")
        parser.add_argument("--limit", type=int, default=1000)
        parser.add_argument("--batch-size", type=int, default=embeddings.BATCH_SIZE)
        parser.add_argument("--threads", type=int, default=0, help="0: one per core")
        parser.add_argument(
            "--reference", type=int, default=128, help="passages of the baseline"
        )
        parser.add_argument("--nuggets", type=int, default=50)
        parser.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS)

    def handle(self, *args, **options) -> None:
        self.stdout.write(embeddings.semantic_status())
        if not embeddings.semantic_available():
            raise CommandError(embeddings.OFF_MESSAGE)
        texts = _texts(options["texts"], options["limit"])
        clock = time.perf_counter()
        encoder = embeddings.load_encoder()
        load = time.perf_counter() - clock
        tokens = [
            min(len(e.ids), embeddings.MAX_TOKENS)
            for e in encoder.tokenizer.encode_batch(texts)
        ]
        threads = options["threads"] or os.cpu_count() or 1
        _, embed, cpu = _timed(
            encoder, texts, batch_size=options["batch_size"], threads=threads
        )
        flop = sum(map(_passage_flop, tokens))
        ceiling = _gemm_ceiling()
        result = {
            "passages": len(texts),
            "mean_tokens": round(sum(tokens) / len(tokens), 1),
            "model_load_seconds": round(load, 2),
            "threads": threads,
            "embed_seconds": round(embed, 2),
            "passages_per_second": round(len(texts) / embed, 1),
            # CPU seconds of every thread of this process: on a machine shared with
            # other work, passages per CPU-second times the cores is what the cores
            # would do for this alone.
            "embed_cpu_seconds": round(cpu, 2),
            "passages_per_cpu_second": round(len(texts) / cpu, 1),
            "cpu_count": os.cpu_count(),
            "load_average": round(os.getloadavg()[0], 2),
            "gflop_per_passage": round(flop / len(texts) / 1e9, 3),
            "achieved_gflop_per_second": round(flop / embed / 1e9, 1),
            "ceiling_gflop_per_second": round(ceiling / 1e9, 1),
            "ceiling_passages_per_second": round(ceiling * len(texts) / flop, 1),
            "share_of_ceiling": round(flop / embed / ceiling, 3),
        }
        result.update(self._reference(encoder, texts, options))
        result.update(self._stored(texts, options["max_words"]))
        result.update(self._matching(texts, options["nuggets"]))
        self.stdout.write(json.dumps(result, indent=1))

    def _reference(self, encoder, texts: list[str], options) -> dict[str, float]:
        """The baseline on the first ``--reference`` passages: the reference forward
        pass on one thread, its speed, and its agreement with the vectors above."""
        count = min(options["reference"], len(texts))
        if count <= 0:
            return {}
        subset = texts[:count]
        from threadpoolctl import threadpool_limits

        # One thread, BLAS included: the forward pass as it ran before the threads.
        with threadpool_limits(limits=1, user_api="blas"):
            reference, seconds, _ = _timed(
                encoder, subset, batch_size=options["batch_size"], threads=1, exact=True
            )
        fast, fast_seconds, _ = _timed(
            encoder,
            subset,
            batch_size=options["batch_size"],
            threads=options["threads"] or os.cpu_count() or 1,
        )
        cosines = (reference * fast).sum(axis=1)
        return {
            "reference_passages": count,
            "reference_passages_per_second": round(count / seconds, 1),
            "speedup_over_reference": round(seconds / fast_seconds, 2),
            "agreement_min_cosine": round(float(cosines.min()), 6),
            "agreement_ok": bool(cosines.min() >= AGREEMENT),
        }

    def _stored(self, texts: list[str], max_words: int) -> dict[str, float]:
        collection = Collection.objects.create(name=f"bench-semantic-{time.time_ns()}")
        try:
            Document.objects.bulk_create(
                Document(collection=collection, docno=str(i), text=t)
                for i, t in enumerate(texts)
            )
            docs = list(Document.objects.filter(collection=collection))
            clock = time.perf_counter()
            units = documents_embed(docs, max_words=max_words)
            seconds = time.perf_counter() - clock
            out = {
                "stored_units": units,
                "stored_units_per_second": round(units / seconds, 1),
                "stored_passages_per_second": round(len(docs) / seconds, 1),
            }
            if connection.vendor == "postgresql":
                out.update(self._table_size())
            return out
        finally:
            collection.delete()

    def _table_size(self) -> dict[str, float]:
        table = UnitEmbedding._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(f"VACUUM FULL ANALYZE {table}")
            cursor.execute("SELECT pg_total_relation_size(%s)", [table])
            size = cursor.fetchone()[0]
        rows = UnitEmbedding.objects.count()
        per_unit = size / rows if rows else 0.0
        return {
            "table_rows": rows,
            "table_bytes_per_unit": round(per_unit, 1),
            "table_gb_per_million_units": round(per_unit * 1e6 / 1e9, 3),
        }

    def _matching(self, texts: list[str], count: int) -> dict[str, float]:
        step = max(1, len(texts) // count)
        nuggets = [
            NuggetSpec(str(i), texts[i][s:e])
            for i in range(0, len(texts), step)[:count]
            for s, e in text_windows(texts[i], max_words=12)[:1]
        ]
        matcher = TopicMatcher(nuggets)
        clock = time.perf_counter()
        for text in texts:
            matcher.score(text)
        seconds = time.perf_counter() - clock
        return {
            "matching_nuggets": len(nuggets),
            "matching_seconds": round(seconds, 2),
            "matching_passages_per_second": round(len(texts) / seconds, 1),
        }
