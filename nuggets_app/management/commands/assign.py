"""``manage.py assign``: give a sample's topics to assessors, round robin."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.topics import UnknownTopics, topics_find
from nuggets_app.management.commands._base import only_one
from nuggets_app.models import Sample
from nuggets_app.pooling.services.assignments import AssignmentError, assignment_create


def find_sample(name: str, pool: str | None, collection: str | None) -> Sample:
    """The sample of that name, narrowed by pool and collection when ambiguous."""
    samples = Sample.objects.filter(name=name).select_related("pool__collection")
    if pool:
        samples = samples.filter(pool__name=pool)
    if collection:
        samples = samples.filter(pool__collection__name=collection)
    return only_one(
        samples,
        unknown=f"unknown sample {name}",
        several=f"several pools have a sample {name}; add --pool",
    )


class Command(BaseCommand):
    help = (
        "Assign topics of a sample to assessors, each topic to k of them (round robin)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sample", required=True, help="sample name")
        parser.add_argument("--pool", help="pool of the sample, if ambiguous")
        parser.add_argument("--collection", help="collection, if ambiguous")
        topics = parser.add_mutually_exclusive_group(required=True)
        topics.add_argument("--topics", nargs="+", metavar="QID", help="topic ids")
        topics.add_argument("--all", action="store_true", help="every sampled topic")
        parser.add_argument("--assessors", nargs="+", required=True, metavar="USER")
        parser.add_argument(
            "--overlap", type=int, default=1, help="assessors per topic (default 1)"
        )

    def handle(self, *args, **options) -> None:
        sample = find_sample(options["sample"], options["pool"], options["collection"])
        users = get_user_model().objects.filter(username__in=options["assessors"])
        by_name = {user.get_username(): user for user in users}
        unknown = [name for name in options["assessors"] if name not in by_name]
        if unknown:
            raise CommandError(f"unknown users: {', '.join(unknown)}")
        topics = None
        if not options["all"]:
            try:
                topics = topics_find(
                    collection=sample.pool.collection, qids=options["topics"]
                )
            except UnknownTopics as exc:
                raise CommandError(str(exc)) from exc
        try:
            assignments = assignment_create(
                sample=sample,
                assessors=[
                    by_name[name] for name in dict.fromkeys(options["assessors"])
                ],
                topics=topics,
                overlap=options["overlap"],
            )
        except AssignmentError as error:
            raise CommandError(str(error)) from error
        load: dict[str, list[str]] = {}
        for assignment in assignments:
            load.setdefault(assignment.assessor.get_username(), []).append(
                assignment.topic.qid
            )
        for name, qids in load.items():
            self.stdout.write(f"{name}: {len(qids)} topics ({' '.join(qids)})")
