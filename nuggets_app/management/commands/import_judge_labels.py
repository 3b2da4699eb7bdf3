"""``manage.py import_judge_labels FILE --collection C --judge NAME``: an automatic
judge's labels (TREC qrels, score files, runs, or JSONL/CSV probabilities)."""

from __future__ import annotations

import argparse
import datetime as dt

from django.core.management.base import BaseCommand, CommandParser

from nuggets_app.importers.judge_labels import FORMATS
from nuggets_app.judges.services import JudgeInfo, judge_labels_import
from nuggets_app.management.commands._base import (
    add_common_arguments,
    check_paths,
    run_import,
)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"a date as YYYY-MM-DD, got {text!r}"
        ) from None


class Command(BaseCommand):
    help = (
        "Import an automatic judge's labels: TREC qrels (qid iter docno grade), "
        "scores (qid Q0 docno score), a run (qid Q0 docno rank score tag), or JSONL/"
        "CSV with a probability per grade (prob_0..prob_k) or prob_yes. A judge of "
        "the same name has its labels replaced, unless a result (an audit, a "
        "release) read them: then the file is refused and goes to a new name."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", metavar="FILE", help="the judge's labels file")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--judge", required=True, help="name of the judge")
        parser.add_argument(
            "--format",
            dest="fmt",
            choices=FORMATS,
            default="auto",
            help="file format (default: auto, by the file name and first line)",
        )
        parser.add_argument("--model", default="", help="the judge's model")
        parser.add_argument("--prompt", default="", help="the judge's prompt")
        parser.add_argument("--date", type=_date, help="when it judged (YYYY-MM-DD)")
        parser.add_argument("--notes", default="", help="anything else to keep")
        parser.add_argument(
            "--threshold",
            type=float,
            help="scores only: the score from which the judge calls a document "
            "relevant (default 0.5 for scores in [0, 1])",
        )
        add_common_arguments(parser)

    def handle(self, *args, **options) -> None:
        check_paths(options["path"])
        info = JudgeInfo(
            model=options["model"],
            prompt=options["prompt"],
            date=options["date"],
            notes=options["notes"],
            threshold=options["threshold"],
        )
        summary = run_import(
            "label",
            options["judge"],
            lambda update: judge_labels_import(
                path=options["path"],
                collection=options["collection"],
                name=options["judge"],
                fmt=options["fmt"],
                info=info,
                encoding=options["encoding"],
                max_errors=options["max_errors"],
                progress=update,
            ),
        )
        self.stdout.write(summary.describe())
        if summary.skipped_documents:
            self.stdout.write(
                f"{summary.skipped_documents} labels name documents the collection "
                "does not hold: kept by docno, for runs imported later"
            )
