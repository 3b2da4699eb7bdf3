"""``manage.py sample``: draw (or extend) a judging sample of a pool."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.services.estimates import EstimateError
from nuggets_app.evaluation.services.top_ups import top_up_draw_sample
from nuggets_app.inference.services.rounds import rounds_advance
from nuggets_app.ir.judge_sampling import DEFAULT_JUDGE_WEIGHT
from nuggets_app.management.commands._base import only_one
from nuggets_app.management.flags import command_error
from nuggets_app.management.progress import topic_progress
from nuggets_app.models import JobNewRun, Judge, MatchJob, Pool, Sample
from nuggets_app.pooling.services.assignments import AssignmentError
from nuggets_app.pooling.services.rounds import sample_rounds_draw
from nuggets_app.pooling.services.samples import (
    DRAWABLE_METHODS,
    SampleError,
    sample_draw,
    sample_extend,
)


def users_named(names: list[str]) -> list:
    return list(get_user_model().objects.filter(username__in=names))


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


def find_judge(pool: Pool, name: str | None) -> Judge | None:
    """The judge ``name`` of the pool's collection (None: no name given)."""
    if not name:
        return None
    judge = Judge.objects.filter(collection=pool.collection_id, name=name).first()
    if judge is None:
        raise CommandError(
            f"collection {pool.collection.name} has no judge {name} (--judge)"
        )
    return judge


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
            f", steered by judge {sample.judge} at weight {sample.judge_weight:g}"
            if sample.judge is not None
            else ""
        )
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
        parser.add_argument("--pool", help="pool name (not with --top-up)")
        parser.add_argument("--collection", help="collection of the pool, if ambiguous")
        parser.add_argument("--name", help="sample name (not with --top-up)")
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
            "--judge",
            metavar="NAME",
            help="statAP steered by this automatic judge of the collection: documents "
            "it calls relevant are likelier drawn, every inclusion probability exact "
            "(--size: the expected number of documents per topic)",
        )
        parser.add_argument(
            "--judge-weight",
            type=float,
            help="with --judge: the judge's share of the sampling distribution, in "
            f"[0, 1] (default {DEFAULT_JUDGE_WEIGHT}; 0 is statAP's distribution)",
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

        parser.add_argument(
            "--top-up",
            action="store_true",
            help="draw a top-up sample of a kept new run's documents outside the pool "
            "(--job N --run NAME --size K: K draws per topic) and assign it",
        )
        parser.add_argument("--job", type=int, help="with --top-up: the job")
        parser.add_argument("--run", help="with --top-up: the kept new run's name")
        parser.add_argument(
            "--assessors",
            help="with --top-up: comma-separated user names to assign every topic to "
            "(default: the assessors of the topic in the job's sample)",
        )

    def handle(self, *args, **options) -> None:
        if options["top_up"]:
            self._top_up(options)
            return
        if not options["pool"] or not options["name"]:
            raise CommandError("--pool and --name are required to draw a sample")
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
                if options["judge"]:
                    raise CommandError("--rounds and --judge do not go together")
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
                    judge=find_judge(pool, options["judge"]),
                    judge_weight=options["judge_weight"],
                    progress=progress,
                )
        for line in sample_lines(sample):
            self.stdout.write(line)

    def _top_up(self, options) -> None:
        if not (options["job"] and options["run"] and options["size"]):
            raise CommandError("--top-up needs --job N, --run NAME and --size K")
        job = MatchJob.objects.filter(pk=options["job"]).first()
        if job is None:
            raise CommandError(f"no job {options['job']}")
        run = JobNewRun.objects.filter(job=job, name=options["run"]).first()
        if run is None:
            raise CommandError(
                f"no new run {options['run']} kept with job {job.pk} (evaluate it on "
                "the job's new-run page first)"
            )
        assessors = None
        if options["assessors"]:
            names = [n.strip() for n in options["assessors"].split(",") if n.strip()]
            found = {u.get_username(): u for u in users_named(names)}
            missing = [n for n in names if n not in found]
            if missing:
                raise CommandError(f"unknown user {missing[0]}")
            assessors = [found[n] for n in names]
        try:
            sample = top_up_draw_sample(
                job=job,
                run=run,
                size=options["size"],
                seed=options["seed"],
                assessors=assessors,
            )
        except (EstimateError, AssignmentError) as error:
            raise command_error(error) from None
        for line in sample_lines(sample):
            self.stdout.write(line)
        self.stdout.write(
            f"assigned to {sample.assignments.values('assessor').distinct().count()} "
            "assessors: once judged, the run's figure on its page, the runs page and "
            f"evaluate --job {job.pk} uses it"
        )
