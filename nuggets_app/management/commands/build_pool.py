"""``manage.py build_pool``: the depth-k pool of chosen runs, with its summary."""

from __future__ import annotations

import statistics

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.management.progress import topic_progress
from nuggets_app.models import Collection, Run
from nuggets_app.pooling.services.pools import (
    PoolError,
    PoolSummary,
    pool_build,
    pool_summary,
)


def summary_lines(summary: PoolSummary, per_topic: bool) -> list[str]:
    """Human-readable lines of a pool summary."""
    sizes = [topic.size for topic in summary.topics] or [0]
    lines = [
        f"pool {summary.name}: depth {summary.depth}, {summary.runs} runs, "
        f"{len(summary.topics)} topics, {summary.documents} documents",
        f"pool size per topic: min {min(sizes)}, median {statistics.median(sizes):g}, "
        f"max {max(sizes)}, mean {statistics.fmean(sizes):.1f}",
        f"documents contributed by only one run: {summary.single_run} "
        f"({100 * summary.single_run / max(summary.documents, 1):.1f}%)",
    ]
    if per_topic:
        lines.append("qid\tsize\tsingle_run")
        lines.extend(f"{t.qid}\t{t.size}\t{t.single_run}" for t in summary.topics)
    return lines


class Command(BaseCommand):
    help = "Build a depth-k pool (union of the top k of each run, per topic) with p(d)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        runs = parser.add_mutually_exclusive_group(required=True)
        runs.add_argument("--runs", nargs="+", metavar="RUN", help="run names (tags)")
        runs.add_argument("--all-runs", action="store_true", help="every run imported")
        parser.add_argument("--depth", type=int, required=True, help="pool depth k")
        parser.add_argument("--name", required=True, help="pool name")
        parser.add_argument(
            "--topics",
            nargs="+",
            metavar="QID",
            help="pool only these topics (default: every topic the runs answer)",
        )
        parser.add_argument(
            "--per-topic", action="store_true", help="also print one line per topic"
        )

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        runs = list(Run.objects.filter(collection=collection).order_by("name"))
        if not options["all_runs"]:
            by_name = {run.name: run for run in runs}
            unknown = [name for name in options["runs"] if name not in by_name]
            if unknown:
                raise CommandError(
                    f"unknown runs in collection {collection.name}: {', '.join(unknown)}"
                )
            runs = [by_name[name] for name in dict.fromkeys(options["runs"])]
        with topic_progress(
            "pooling", verbosity=options["verbosity"], errors=PoolError
        ) as progress:
            pool = pool_build(
                collection=collection,
                runs=runs,
                depth=options["depth"],
                name=options["name"],
                progress=progress,
                topics=options["topics"] or None,
            )
        for line in summary_lines(pool_summary(pool), options["per_topic"]):
            self.stdout.write(line)
