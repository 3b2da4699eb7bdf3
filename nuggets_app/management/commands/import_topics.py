"""``manage.py import_topics PATH --collection NAME``: TREC, XML or JSONL topics."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from nuggets_app.collection.services.imports import topics_import
from nuggets_app.importers.topics import FORMATS
from nuggets_app.management.commands._base import (
    add_common_arguments,
    check_paths,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import topics (TREC <top> format, TREC XML topics with subtopics, or JSONL) into "
        "a collection; topics are upserted by qid. A bad file saves nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="topic file")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--format", choices=FORMATS, default="auto", dest="fmt")
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        check_paths(options["path"])
        summary = run_import(
            "topic",
            options["collection"],
            lambda update: topics_import(
                path=options["path"],
                collection=options["collection"],
                fmt=options["fmt"],
                encoding=options["encoding"],
                max_errors=options["max_errors"],
                progress=update,
            ),
        )
        self.stdout.write(summary.describe())
