"""``manage.py verification_queue``: draw, assign and report a verification sample.

Draw (and assign to assessors by user name)::

    verification_queue --job ID [--threshold T | --top-n N] --relevant 10
        --nonrelevant 5 [--uncertain 5] --seed 1 [--name NAME] [--assessor NAME ...]
        [--overlap K]

Report (CSV on standard output: one row per stratum, per inferred label and overall,
with the Wilson 95% interval; then, with the model's p, how calibrated p was)::

    verification_queue --report --job ID --name NAME
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.services.verification import (
    VerificationError,
    verification_queue_create,
    verification_report,
)
from nuggets_app.management.commands._base import (
    add_rule_arguments,
    rule_of_options,
)
from nuggets_app.models import MatchJob, Sample
from nuggets_app.pooling.services.assignments import AssignmentError


class Command(BaseCommand):
    help = "Draw a stratified verification sample of a job's inferred labels, or report it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--job", type=int, required=True, help="matching job id")
        parser.add_argument("--relevant", type=int, default=10, help="per topic (10)")
        parser.add_argument("--nonrelevant", type=int, default=5, help="per topic (5)")
        parser.add_argument(
            "--uncertain",
            type=int,
            default=0,
            help="per topic: also the documents whose p is closest to 0.5 (0)",
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--name", default="", help="sample name")
        parser.add_argument("--assessor", action="append", default=[], metavar="NAME")
        parser.add_argument("--overlap", type=int, default=1)
        parser.add_argument("--report", action="store_true", help="print the report")
        add_rule_arguments(parser)

    def handle(self, *args, **options) -> None:
        job = MatchJob.objects.filter(pk=options["job"]).first()
        if job is None:
            raise CommandError(f"no job {options['job']}")
        try:
            if options["report"]:
                self._report(job, options["name"])
            else:
                self._create(job, options)
        except (VerificationError, AssignmentError) as error:
            raise CommandError(str(error)) from None

    def _create(self, job: MatchJob, options) -> None:
        users = get_user_model().objects.filter(username__in=options["assessor"])
        missing = sorted(set(options["assessor"]) - {u.username for u in users})
        if missing:
            raise CommandError(f"no user {', '.join(missing)}")
        by_name = {u.username: u for u in users}
        sample = verification_queue_create(
            job=job,
            rule=rule_of_options(options, job),
            relevant=options["relevant"],
            nonrelevant=options["nonrelevant"],
            seed=options["seed"],
            assessors=[by_name[n] for n in options["assessor"]],
            name=options["name"],
            overlap=options["overlap"],
            uncertain=options["uncertain"],
        )
        for qid, record in sample.draws.items():
            for label, info in record["strata"].items():
                self.stdout.write(
                    f"{qid}\t{label}\t{len(info['drawn'])} of {info['population']}"
                )
        self.stdout.write(f"sample\t{sample.pk}\t{sample.name}")
        if not options["assessor"]:
            self.stderr.write(
                f"sample {sample.name} is unassigned: nobody judges it until "
                f"manage.py assign --sample {sample.name} --all --assessors ..."
            )

    def _report(self, job: MatchJob, name: str) -> None:
        pool = job.pool or (job.sample.pool if job.sample else None)
        sample = Sample.objects.filter(
            pool=pool, name=name, method=Sample.Method.VERIFICATION
        ).first()
        if sample is None:
            raise CommandError(f"no verification sample {name!r} for job {job.pk}")
        report = verification_report(sample=sample)
        self.stdout.write(report.table().csv_text(), ending="")
        if report.calibration:
            self.stdout.write("")
            self.stdout.write(report.calibration_table().csv_text(), ending="")
