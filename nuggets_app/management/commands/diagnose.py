"""``manage.py diagnose``: trust diagnostics of a matching job's inferred qrels.

``diagnose --collection NAME --job ID [--qrels NAME] [--threshold T | --top-n N]
[--bins B] [--length-bins B] [--out DIR]`` writes CSV tables and PNG plots:

- ``matcher_map.csv``/``.png``: AP per topic of the job's scores against the held-out
  human labels (judged, not a nugget source), ``all`` = MAP;
- ``do_hsa.csv``, ``histograms.csv``/``.png``: DO and HSA per topic and the histograms;
- ``length_bias.csv``/``.png``, ``length_tests.csv``: human and inferred qrels per
  equal-size length bin, Mann-Whitney U tests.

Human labels come from the judgments made in the application, or from imported qrels
with ``--qrels NAME``. The inferred qrels use the decision rule (default score >= 0.5).
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.selectors import SourceError
from nuggets_app.evaluation.services.diagnostics import trust_report, trust_report_write
from nuggets_app.management.commands._base import (
    add_rule_arguments,
    rule_of_options,
)
from nuggets_app.models import Collection, MatchJob, Qrels


class Command(BaseCommand):
    help = "Write the trust diagnostics of a matching job (CSV tables and PNG plots)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True)
        parser.add_argument("--job", type=int, required=True, help="matching job id")
        parser.add_argument("--qrels", metavar="NAME", help="imported human qrels")
        parser.add_argument("--bins", type=int, default=10, help="DO/HSA bins (10)")
        parser.add_argument("--length-bins", type=int, default=10, help="(10)")
        parser.add_argument("--out", default="diagnostics", metavar="DIR")
        add_rule_arguments(parser)

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection {options['collection']!r}")
        job = MatchJob.objects.filter(pk=options["job"], collection=collection).first()
        if job is None:
            raise CommandError(f"no job {options['job']} in {collection.name}")
        key = "human"
        if options["qrels"]:
            qrels = Qrels.objects.filter(collection=collection, name=options["qrels"])
            if not qrels.exists():
                raise CommandError(
                    f"no qrels {options['qrels']!r} in {collection.name}"
                )
            key = f"qrels:{qrels.get().pk}"
        if options["bins"] < 1 or options["length_bins"] < 1:
            raise CommandError("--bins and --length-bins must be at least 1")
        try:
            report = trust_report(
                collection=collection,
                job=job,
                rule=rule_of_options(options, job),
                human_key=key,
                bins=options["bins"],
                length_bins=options["length_bins"],
            )
        except SourceError as error:
            raise CommandError(str(error)) from None
        for path in trust_report_write(report, Path(options["out"])):
            self.stdout.write(str(path))
        m = report.matcher
        self.stdout.write(f"matcher MAP\t{m.mean!r}\t({len(m.per_topic)} topics)")
