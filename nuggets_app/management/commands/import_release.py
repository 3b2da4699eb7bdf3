"""``manage.py import_release PATH [--collection C]``: a release into this
installation, and its estimates recomputed."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.release_imports import release_import


class Command(BaseCommand):
    help = (
        "Import a test-collection release (folder or .tar.gz) into a collection whose "
        "documents are loaded: topics, runs, qrels and prels, the nugget bank; then "
        "recompute the default estimates and compare them with the release's."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="release folder or .tar.gz")
        parser.add_argument(
            "--collection", help="collection name (default: the release's)"
        )
        parser.add_argument(
            "--prefix",
            default="release",
            help="names of the stored qrels (PREFIX-human, ...) and nugget bank",
        )

    def handle(self, *args, **options) -> None:
        try:
            result = release_import(
                path=options["path"],
                collection=options["collection"],
                prefix=options["prefix"],
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(result.estimates, ending="")
        self.stderr.write(result.describe())
        if not result.reproduced:
            raise CommandError("the estimates differ from the release's")
