"""``manage.py import_collection PATH --name NAME``: load documents (TREC, JSONL, dir)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.imports import (
    ImportSummary,
    collection_import,
    ir_datasets_import,
)
from nuggets_app.importers.documents import FORMATS
from nuggets_app.management.commands._base import (
    add_common_arguments,
    add_relevance_level_argument,
    check_paths,
    relevance_level_apply,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import a document collection: TREC SGML (<DOC><DOCNO>..), JSONL "
        '({"docno","title","text"} or {"docno","html"}) or a directory of .txt/.html '
        "files; .gz files are read compressed. One transaction: a bad file saves nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="?", help="file or directory to import")
        parser.add_argument("--name", required=True, help="collection name (a slug)")
        parser.add_argument("--format", choices=FORMATS, default="auto", dest="fmt")
        parser.add_argument(
            "--encoding-errors",
            choices=("strict", "replace"),
            default="strict",
            help="'replace' turns undecodable bytes into U+FFFD and reports how many",
        )
        parser.add_argument(
            "--changed-text",
            choices=("refuse", "reanchor"),
            default="refuse",
            help="a judged document whose text changes: refuse the file (default), or "
            "move each of its nuggets to its span text in the new text",
        )
        parser.add_argument(
            "--ir-datasets",
            metavar="ID",
            help="read the documents of an ir_datasets dataset instead of PATH "
            "(needs the ir_datasets package and its files)",
        )
        add_relevance_level_argument(parser, what="the collection's level")
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        self._import(options)
        line = relevance_level_apply(options["name"], options["relevance_level"])
        if line:
            self.stdout.write(line)

    def _import(self, options: dict) -> None:
        if options["ir_datasets"]:
            summary = self._from_ir_datasets(options)
        else:
            if not options["path"]:
                raise CommandError("give a PATH (or --ir-datasets ID)")
            check_paths(options["path"])
            summary = run_import(
                "doc",
                options["name"],
                lambda update: collection_import(
                    path=options["path"],
                    name=options["name"],
                    fmt=options["fmt"],
                    encoding=options["encoding"],
                    encoding_errors=options["encoding_errors"],
                    max_errors=options["max_errors"],
                    changed_text=options["changed_text"],
                    progress=update,
                ),
            )
        self.stdout.write(summary.describe())

    def _from_ir_datasets(self, options: dict) -> ImportSummary:
        return run_import(
            "doc",
            options["name"],
            lambda update: ir_datasets_import(
                dataset_id=options["ir_datasets"],
                name=options["name"],
                progress=update,
            ),
        )
