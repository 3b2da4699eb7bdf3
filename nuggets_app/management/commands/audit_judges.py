"""``manage.py audit_judges --collection C [--judge NAME] [--sample S] [--json OUT]``:
the collection's automatic judges audited against the people's statAP sample."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.judge_audit_reports import (
    audit_json,
    audit_lines,
)
from nuggets_app.evaluation.services.judge_audits import judge_audit_build
from nuggets_app.evaluation.services.judge_plans import (
    DEFAULT_HALF_WIDTH,
    judge_plan_build,
    plan_json,
    plan_lines,
)
from nuggets_app.models import Collection


class Command(BaseCommand):
    help = (
        "Audit the collection's automatic judges against the people's statAP sample: "
        "kappa, precision, recall, the judge's count of relevant documents against "
        "the people's R, and P(relevant | judge grade), each with its 95% interval."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument(
            "--judge",
            dest="judges",
            action="append",
            metavar="NAME",
            help="audit this judge (repeatable; default: every judge)",
        )
        parser.add_argument(
            "--sample", help="the people's sample (default: the latest statAP one)"
        )
        parser.add_argument("--json", metavar="OUT", help="also write the audit here")
        parser.add_argument(
            "--half-width",
            type=float,
            help="plan the people's judgments each topic needs for a 95%% interval on "
            "R of this half-width, without a judge and with each (default "
            f"{DEFAULT_HALF_WIDTH:g} of R)",
        )
        parser.add_argument(
            "--documents",
            action="store_true",
            help="the half-width is a number of relevant documents, not a share of R",
        )

    def handle(self, *args, **options) -> None:
        try:
            collection = Collection.objects.get(name=options["collection"])
        except Collection.DoesNotExist:
            raise CommandError(
                f"no collection named {options['collection']!r}"
            ) from None
        try:
            report = judge_audit_build(
                collection=collection,
                judge_names=options["judges"],
                sample_name=options["sample"],
            )
            half = options["half_width"]
            plan = judge_plan_build(
                report=report,
                half_width=DEFAULT_HALF_WIDTH if half is None else half,
                relative=not options["documents"],
            )
        except DomainError as error:
            raise CommandError(str(error)) from None
        for line in [*audit_lines(report), "", *plan_lines(plan)]:
            self.stdout.write(line)
        if options["json"]:
            with open(options["json"], "w", encoding="utf-8") as handle:
                json.dump(
                    {**audit_json(report), "plan": plan_json(plan)}, handle, indent=2
                )
                handle.write("\n")
