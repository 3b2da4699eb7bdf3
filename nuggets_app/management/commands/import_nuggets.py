"""``manage.py import_nuggets FILE --collection C``: a nugget bank from a file."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.importers.nuggets import FORMATS
from nuggets_app.management.commands._base import (
    add_common_arguments,
    check_paths,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import nuggets from a file as a nugget bank: the project's JSONL, TREC QA "
        "nugget keys (vital/okay), TREC RAG 2025 nuggets, TREC TS nuggets. All or "
        "nothing; a bank of the same name is replaced."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="nugget file (.gz accepted)")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--name", help="bank name (default: the file name)")
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument(
            "--create-topics",
            action="store_true",
            help="make a topic of every unknown qid (and the collection if missing) "
            "instead of refusing the file",
        )
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        check_paths(options["path"])
        result = run_import(
            "nugget",
            options["name"] or options["path"],
            lambda update: nugget_bank_import(
                path=options["path"],
                collection=options["collection"],
                name=options["name"],
                format=options["format"],
                encoding=options["encoding"],
                max_errors=options["max_errors"],
                create_topics=options["create_topics"],
                progress=update,
            ),
        )
        self.stdout.write(result.describe())
