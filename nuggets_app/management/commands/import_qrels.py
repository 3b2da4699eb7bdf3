"""``manage.py import_qrels PATH --collection NAME --name NAME``: qrels, prels,
probabilistic qrels, or (``--kind subtopics``) subtopic qrels."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.imports import qrels_import
from nuggets_app.collection.services.relevance import (
    RelevanceLevelError,
    relevance_level_set,
)
from nuggets_app.importers.cli import add_common_arguments, check_paths, run_import
from nuggets_app.importers.qrels import KINDS
from nuggets_app.models import Collection


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
        parser.add_argument(
            "--relevance-level",
            type=int,
            metavar="K",
            help="also set the collection's level: relevant at grade >= K (TREC DL: "
            "2); recorded on every job launched later",
        )
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
        if options["relevance_level"] is not None:
            collection = Collection.objects.get(name=options["collection"])
            try:
                relevance_level_set(
                    collection=collection, level=options["relevance_level"]
                )
            except RelevanceLevelError as error:
                raise CommandError(f"--relevance-level: {error}") from None
            self.stdout.write(
                f"{collection.name}: relevant at grade >= {collection.relevant_threshold}"
            )
