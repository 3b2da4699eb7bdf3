"""``manage.py export_release --collection C --job N -o DIR|ARCHIVE.tar.gz``."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.services.estimates import EstimateError
from nuggets_app.evaluation.services.releases import ReleaseError, release_write
from nuggets_app.models import Collection, MatchJob


class Command(BaseCommand):
    help = (
        "Write a test-collection release of a collection and a finished matching "
        "job: topics, human/merged/probabilistic qrels, prels, the nugget bank, the "
        "judgments with times (pseudonymous assessors), the agreement table, the "
        "default estimates with their intervals, a manifest with checksums and a "
        "README, into a folder or a .tar.gz archive."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--job", type=int, required=True, help="matching job id")
        parser.add_argument(
            "--output",
            "-o",
            type=Path,
            required=True,
            help="a new folder, or a file ending in .tar.gz",
        )
        parser.add_argument(
            "--real-names",
            action="store_true",
            help="name assessors by their user names (default: assessor-1, ...)",
        )

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        job = MatchJob.objects.filter(pk=options["job"], collection=collection).first()
        if job is None:
            raise CommandError(f"no job {options['job']} in {collection.name}")
        try:
            summary = release_write(
                collection=collection,
                job=job,
                out=options["output"],
                real_names=options["real_names"],
            )
        except (ReleaseError, EstimateError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(summary.describe())
