"""``manage.py sample``: draw (or extend) a judging sample of a pool."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.inference.services.rounds import rounds_advance
from nuggets_app.management.commands._base import only_one
from nuggets_app.management.progress import topic_progress
from nuggets_app.models import Pool, Sample
from nuggets_app.pooling.services.rounds import sample_rounds_draw
from nuggets_app.pooling.services.samples import (
    DRAWABLE_METHODS,
    SampleError,
    sample_draw,
    sample_extend,
)


def find_pool(name: str, collection: str | None) -> Pool:
    """The pool of that name (in that collection, when several share the name)."""
    pools = Pool.objects.filter(name=name).select_related("collection")
    if collection:
        pools = pools.filter(collection__name=collection)
    return only_one(
        pools,
        unknown=f"unknown pool {name}",
        several=f"several collections have a pool {name}; add --collection",
    )


def sample_lines(sample: Sample) -> list[str]:
    """Totals of a sample: documents, draws, how pi was obtained."""
    records = sample.draws.values()
    distinct = sum(record["distinct"] for record in records)
    # With-replacement designs count their draws; rounds draw without replacement,
    # so their documents are their draws.
    counted = [record["draws"] for record in records if "draws" in record]
    draws = f", {sum(counted)} draws" if counted else ""
    methods = sorted({record["pi"] for record in records})
    return [
        f"sample {sample.name} of pool {sample.pool.name}: {sample.method}, "
        f"{sample.size} per topic, seed {sample.seed}"
        + (", per-run quota" if sample.per_run_quota else "")
        + (
            f", {sample.rounds_drawn} of {sample.rounds} rounds drawn"
            if sample.rounds > 1
            else ""
        ),
        f"{len(sample.draws)} topics, {distinct} documents to judge{draws}",
        f"inclusion probabilities: {', '.join(methods)}",
    ]


class Command(BaseCommand):
    help = "Draw a sample of a pool (statAP, uniform or depth) with inclusion probabilities."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", required=True, help="pool name")
        parser.add_argument("--collection", help="collection of the pool, if ambiguous")
        parser.add_argument("--name", required=True, help="sample name")
        parser.add_argument("--size", type=int, help="distinct documents per topic")
        parser.add_argument(
            "--method", choices=DRAWABLE_METHODS, default=Sample.Method.STATAP
        )
        parser.add_argument("--seed", type=int, default=1, help="random seed (stored)")
        parser.add_argument(
            "--per-run-quota",
            action="store_true",
            help="statAP per run, every run getting as many of its documents judged",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=1,
            help="draw in this many rounds (--size: the budget per topic); round 1 now, "
            "by statAP's design, the others guided by the relevance model",
        )
        parser.add_argument(
            "--next-round",
            action="store_true",
            help="draw the next round of the sample NAME if its latest round is judged",
        )
        parser.add_argument(
            "--extend",
            type=int,
            metavar="EXTRA",
            help="add EXTRA documents per topic to the existing sample NAME",
        )

    def handle(self, *args, **options) -> None:
        pool = find_pool(options["pool"], options["collection"])
        with topic_progress(
            "sampling", verbosity=options["verbosity"], errors=SampleError
        ) as progress:
            if options["next_round"]:
                sample = Sample.objects.filter(pool=pool, name=options["name"]).first()
                if sample is None:
                    raise CommandError(
                        f"unknown sample {options['name']} of pool {pool}"
                    )
                if not rounds_advance(sample_id=sample.pk):
                    raise CommandError(
                        f"sample {sample.name}: no round to draw (all drawn, or the "
                        "latest one is not judged yet)"
                    )
                sample.refresh_from_db()
            elif options["rounds"] > 1:
                if options["size"] is None:
                    raise CommandError("--size is required to draw a sample")
                if (
                    options["method"] != Sample.Method.STATAP
                    or options["per_run_quota"]
                ):
                    raise CommandError("--rounds needs --method statap, no quota")
                sample = sample_rounds_draw(
                    pool=pool,
                    budget=options["size"],
                    rounds=options["rounds"],
                    seed=options["seed"],
                    name=options["name"],
                    progress=progress,
                )
            elif options["extend"] is not None:
                sample = Sample.objects.filter(pool=pool, name=options["name"]).first()
                if sample is None:
                    raise CommandError(
                        f"unknown sample {options['name']} of pool {pool}"
                    )
                sample = sample_extend(
                    sample=sample, extra=options["extend"], progress=progress
                )
            else:
                if options["size"] is None:
                    raise CommandError("--size is required to draw a sample")
                sample = sample_draw(
                    pool=pool,
                    size=options["size"],
                    method=options["method"],
                    seed=options["seed"],
                    name=options["name"],
                    per_run_quota=options["per_run_quota"],
                    progress=progress,
                )
        for line in sample_lines(sample):
            self.stdout.write(line)
