"""``manage.py import_runs PATH [PATH ...] --collection NAME``: TREC run files."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from nuggets_app.collection.services.imports import runs_import
from nuggets_app.management.commands._base import (
    add_common_arguments,
    check_paths,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import TREC run files (qid Q0 docno rank score tag); the run name is the tag. "
        "One transaction per file; ranks follow trec_eval's order (score, then docno)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="run files")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument(
            "--skip-unknown-documents",
            action="store_true",
            help="skip the lines of documents not in the collection (counted) instead "
            "of refusing the file; the other documents keep their ranks",
        )
        parser.add_argument(
            "--model",
            metavar="NAME",
            help="the model the runs used (e.g. an LLM reranker); a run whose model "
            "is an automatic judge's leans on that judge (the runs page says so)",
        )
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        check_paths(*options["paths"])
        for path in options["paths"]:
            summaries = run_import(
                "line",
                str(path),
                lambda update, path=path: runs_import(
                    paths=[path],
                    collection=options["collection"],
                    encoding=options["encoding"],
                    max_errors=options["max_errors"],
                    progress=update,
                    skip_unknown_documents=options["skip_unknown_documents"],
                    model=options["model"],
                ),
            )
            for summary in summaries:
                self.stdout.write(summary.describe())
