"""``manage.py import_qrels PATH --collection NAME --name NAME``: qrels, prels,
probabilistic qrels, or (``--kind subtopics``) subtopic qrels."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from nuggets_app.collection.services.imports import qrels_import
from nuggets_app.importers.qrels import KINDS
from nuggets_app.management.commands._base import (
    add_common_arguments,
    add_relevance_level_argument,
    check_paths,
    relevance_level_apply,
    run_import,
)


class Command(BaseCommand):
    help = (
        "Import relevance judgments: TREC qrels (qid iter docno rel), prels "
        "(qid docno rel method inclusion_prob), probabilistic qrels (qid docno rel p "
        "pi source) or, with --kind subtopics, diversity qrels (qid subtopic docno "
        "rel). A qrels of the same name is replaced."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="qrels or prels file")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--name", required=True, help="name of the qrels")
        parser.add_argument(
            "--kind",
            "--format",
            dest="kind",
            choices=KINDS,
            default="auto",
            help="file format (default: auto, by the column count; subtopic qrels "
            "have the 4 columns of plain qrels, so they need --kind subtopics)",
        )
        add_relevance_level_argument(parser, what="also the collection's level")
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        check_paths(options["path"])
        summary = run_import(
            "judgment",
            options["name"],
            lambda update: qrels_import(
                path=options["path"],
                collection=options["collection"],
                name=options["name"],
                kind=options["kind"],
                encoding=options["encoding"],
                max_errors=options["max_errors"],
                progress=update,
            ),
        )
        self.stdout.write(summary.describe())
        line = relevance_level_apply(options["collection"], options["relevance_level"])
        if line:
            self.stdout.write(line)
