"""``manage.py make_runs``: a suite of diverse TREC runs over a collection, for pooling."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.imports import runs_import
from nuggets_app.collection.services.suite_runs import (
    document_texts,
    qrels_read,
    runs_make,
    topic_queries,
)
from nuggets_app.errors import DomainError
from nuggets_app.importers.documents import parse_collection
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.topics import parse_topics
from nuggets_app.learning.run_suite import RUNS
from nuggets_app.models import Collection, Topic


def _file_docs(path: str) -> list[tuple[str, str]]:
    return [
        (
            r.docno,
            f"{r.title}\n{r.text}"
            if r.title and not r.text.startswith(r.title)
            else r.text,
        )
        for r in parse_collection(path)
    ]


def _file_topics(path: str) -> list[tuple[str, str]]:
    return [(r.qid, r.title or r.description) for r in parse_topics(path)]


class Command(BaseCommand):
    help = (
        "Rank a collection with at least 12 retrieval models (BM25 variants, TF-IDF, "
        "query likelihood, RM3, weak runs), write TREC run files and import them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--collection", help="collection name in the database")
        source.add_argument("--docs", help="documents file (JSONL or TREC SGML)")
        parser.add_argument("--topics", help="topics file (with --docs)")
        parser.add_argument("--out", help="directory for the run files")
        parser.add_argument(
            "--depth", type=int, default=1000, help="documents per topic"
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the noisy run")
        parser.add_argument(
            "--feedback-qrels",
            help="qrels file: adds bm25-rf-qrels, feedback from 3 relevant docs per topic",
        )
        parser.add_argument(
            "--only",
            nargs="+",
            metavar="TAG",
            help=f"run tags to make: {', '.join(RUNS)}",
        )
        parser.add_argument(
            "--no-import", action="store_true", help="only write the files"
        )

    def handle(self, *args, **options) -> None:
        if options["depth"] < 1:
            raise CommandError("--depth must be at least 1")
        try:
            docs, topics, collection = self._inputs(options)
            feedback = None
            if options["feedback_qrels"]:
                labels = qrels_read(options["feedback_qrels"])
                feedback = {
                    q: sorted(d for d, g in docs_.items() if g > 0)
                    for q, docs_ in labels.items()
                }
        except ImportFormatError as error:
            raise CommandError(str(error)) from error
        out = options["out"] or (None if collection else "")
        if out == "":
            raise CommandError("--out is required with --docs")
        with tempfile.TemporaryDirectory() as scratch:
            out_dir = Path(out or scratch)
            try:
                paths = runs_make(
                    docs=docs,
                    topics=topics,
                    out_dir=out_dir,
                    depth=options["depth"],
                    seed=options["seed"],
                    feedback=feedback,
                    tags=options["only"],
                )
            except DomainError as error:
                raise CommandError(str(error)) from error
            for tag, path in paths.items():
                self.stdout.write(f"{tag}\t{path if out else '(not kept)'}")
            if collection is not None and not options["no_import"]:
                try:
                    runs_import(paths=list(paths.values()), collection=collection)
                except ImportFormatError as error:
                    raise CommandError(str(error)) from error
                self.stdout.write(
                    f"imported {len(paths)} runs into collection {collection.name}"
                )

    def _inputs(self, options):
        if options["collection"]:
            collection = Collection.objects.filter(name=options["collection"]).first()
            if collection is None:
                raise CommandError(f"no collection named {options['collection']}")
            topics = topic_queries(Topic.objects.filter(collection=collection))
            docs = document_texts(collection)
            if not docs or not topics:
                raise CommandError(
                    f"collection {collection.name} needs documents and topics first"
                )
            return docs, topics, collection
        if not options["topics"]:
            raise CommandError("--topics is required with --docs")
        return _file_docs(options["docs"]), _file_topics(options["topics"]), None
