"""``manage.py export_ltr``: a learning-to-rank training set (SVMlight/LETOR) from a
matching job's human and inferred judgments, with per-topic folds."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.services.ltr import ltr_export
from nuggets_app.errors import DomainError
from nuggets_app.inference.services.rule_grammar import rule_from_options
from nuggets_app.learning.rule_spec import RULE_SPECS
from nuggets_app.models import MatchJob


class Command(BaseCommand):
    help = (
        "Write a learning-to-rank training set of a matching job: all.txt and "
        "fold1..K.txt (rel qid:Q 1:v ... # docno person|inferred; human grades "
        "override the rule's decisions), features.txt and provenance.json."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--job", type=int, required=True, help="matching job id")
        parser.add_argument(
            "--rule",
            help=f"decision rule for unjudged documents: {RULE_SPECS} (default: p:0.5 "
            "with a fitted model, else paper:0.5)",
        )
        parser.add_argument("--out", required=True, help="output directory")
        parser.add_argument("--folds", type=int, default=5, help="topic folds")
        parser.add_argument("--seed", type=int, default=1, help="fold shuffle seed")

    def handle(self, *args, **options) -> None:
        job = MatchJob.objects.filter(pk=options["job"]).first()
        if job is None:
            raise CommandError(f"no matching job {options['job']}")
        try:
            rule = rule_from_options(rule=options["rule"], job=job)
            export = ltr_export(
                job=job, rule=rule, folds=options["folds"], seed=options["seed"]
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        paths = export.write(options["out"])
        counts = export.provenance["counts"]
        self.stdout.write(
            f"{counts['lines']} lines over {counts['topics']} topics "
            f"({counts['person']} judged, {counts['inferred']} inferred, "
            f"{counts['relevant']} relevant), rule {rule.describe()}, "
            f"{options['folds']} folds (seed {options['seed']}): "
            + ", ".join(p.name for p in paths)
        )
