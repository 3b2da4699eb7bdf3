"""``manage.py export_nuggets --collection C``: the nugget bank of a collection."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.nugget_bank_exports import (
    NuggetExportError,
    nugget_bank_export,
)
from nuggets_app.importers.nugget_writers import WRITE_FORMATS
from nuggets_app.management.commands._base import only_one
from nuggets_app.models import Collection, Sample


class Command(BaseCommand):
    help = (
        "Write the nuggets of a collection (or of a sample's judged documents, or of "
        "one assessor) as a nugget bank: the project's JSONL with every field and its "
        "provenance (import_nuggets reads it back), TREC RAG 2025 nuggets or TREC QA "
        "nugget keys."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--sample", help="only the nuggets of this sample's pairs")
        parser.add_argument("--assessor", help="only this assessor's nuggets")
        parser.add_argument(
            "--format",
            choices=WRITE_FORMATS,
            default="jsonl",
            help="jsonl (every field), rag (TREC RAG 2025), trec-qa (TREC QA key)",
        )
        parser.add_argument("--output", "-o", type=Path, help="file (default: stdout)")

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        sample = None
        if options["sample"]:
            name = options["sample"]
            sample = only_one(
                Sample.objects.filter(pool__collection=collection, name=name),
                unknown=f"unknown sample {name} in collection {collection.name}",
                several=f"several samples named {name} in {collection.name}",
            )
        try:
            export = nugget_bank_export(
                collection=collection,
                sample=sample,
                assessor=options["assessor"],
                format=options["format"],
            )
        except NuggetExportError as exc:
            raise CommandError(str(exc)) from exc
        if options["output"]:
            options["output"].write_text(export.text, encoding="utf-8")
            self.stderr.write(f"wrote {options['output']}: {export.describe()}")
        else:
            self.stdout.write(export.text, ending="")
