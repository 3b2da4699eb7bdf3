"""``manage.py evaluate_answers --collection C ANSWERS.jsonl``: generated answers
scored by a collection's nuggets."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.services.answers import (
    INTERVAL_NOTE,
    AnswersError,
    answers_evaluate,
)
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.inference.services.embeddings import semantic_status
from nuggets_app.ir.answers import DEFAULT_THRESHOLD
from nuggets_app.models import Collection


class Command(BaseCommand):
    help = (
        "Evaluate generated answers (JSONL: run_id, qid, text, citations) against a "
        "collection's nuggets: which nuggets each answer contains (the min-span "
        "matcher), nugget recall per answer (all, vital-weighted) and per system the "
        "means over topics with 95% intervals."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("answers", help="answers JSONL (.gz accepted)")
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--bank", help="only the nuggets of this nugget bank")
        parser.add_argument(
            "--threshold",
            type=float,
            default=DEFAULT_THRESHOLD,
            help="an answer contains a nugget when its min-span score is >= this",
        )
        parser.add_argument(
            "--details",
            type=Path,
            help="write per answer and nugget: score, decision, matched spans (JSONL)",
        )

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        try:
            result = answers_evaluate(
                collection=collection,
                path=options["answers"],
                bank=options["bank"],
                threshold=options["threshold"],
            )
        except (ImportFormatError, AnswersError) as exc:
            raise CommandError(str(exc)) from exc
        for line in result.table():
            self.stdout.write(line)
        if options["details"]:
            with options["details"].open("w", encoding="utf-8") as fh:
                for answer in result.answers:
                    row = {
                        "run_id": answer.answer.run_id,
                        "qid": answer.answer.qid,
                        "recall": answer.recall,
                        "weighted_recall": answer.weighted,
                        "nuggets": answer.rows(),
                    }
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            self.stderr.write(f"wrote {options['details']}")
        for qid, lines in sorted(result.no_nuggets.items()):
            self.stderr.write(
                f"topic {qid} has no nuggets: {len(lines)} answers not evaluated "
                f"(lines {', '.join(map(str, lines[:10]))})"
            )
        self.stderr.write(
            f"{len(result.topics)} topics, threshold {result.threshold:g}. "
            f"{INTERVAL_NOTE} {semantic_status()}"
        )
