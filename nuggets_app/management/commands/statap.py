"""``manage.py statap PRELS RUN [RUN ...]``: statAP as NIST's statAP_MQ_eval_v3.pl.

Default output: ``measure<TAB>topic<TAB>value`` lines (statAP, statRprec, statP@30,
statnDCG, estR, statAP_var, statAP_ci_low, statAP_ci_high; ``all`` for the means and
``VAR_MAP``), ``run<TAB>NAME`` before each block when there are several runs.
``--nist-output`` prints the script's own text instead (``--per-topic`` is its ``-q``,
``--terse`` its ``-t``).
"""

from __future__ import annotations

from typing import Literal

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.services.inputs import (
    format_rows,
    read_prels_file,
    read_run_file,
)
from nuggets_app.ir.statap import statap_evaluate, statap_rows
from nuggets_app.ir.statap_nist import nist_report
from nuggets_app.management.commands._base import input_errors


class Command(BaseCommand):
    help = (
        "statAP estimates of runs from prels (qid docno rel method inclusion_prob), "
        "numbers as NIST's statAP_MQ_eval_v3.pl computes them, with 95% intervals."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("prels", metavar="PRELS", help="prels file")
        parser.add_argument("runs", nargs="+", metavar="RUN", help="TREC run files")
        parser.add_argument(
            "-f",
            dest="sampled_only",
            action="store_true",
            help="drop method-0 documents, keep the given pi of method-2 documents",
        )
        only = parser.add_mutually_exclusive_group()
        only.add_argument(
            "-n",
            dest="only",
            action="store_const",
            const="neu",
            help="evaluate only topics judged by statAP sampling alone (NEU)",
        )
        only.add_argument(
            "-m",
            dest="only",
            action="store_const",
            const="mixed",
            help="evaluate only topics judged by both selectors (MIXED)",
        )
        parser.add_argument(
            "--per-topic", action="store_true", help="per-topic lines as well as 'all'"
        )
        parser.add_argument(
            "--nist-output",
            action="store_true",
            help="the reference script's exact text",
        )
        parser.add_argument(
            "--terse", action="store_true", help="with --nist-output: the script's -t"
        )
        parser.add_argument(
            "--no-stale",
            action="store_true",
            help="with --nist-output: print NA where the script repeats the previous "
            "topic's nDCG and variance for a topic without relevant documents",
        )

    def handle(self, *args, **options) -> None:
        if options["terse"] and not options["nist_output"]:
            raise CommandError("--terse only applies to --nist-output")
        with input_errors():
            prels = read_prels_file(
                options["prels"], sampled_only=options["sampled_only"]
            )
            runs = [read_run_file(path, contiguous=True) for path in options["runs"]]
        only: Literal["all", "neu", "mixed"] = options["only"] or "all"
        results = [
            statap_evaluate(prels, r.scores, only=only, name=r.name) for r in runs
        ]
        if options["nist_output"]:
            text = nist_report(
                results,
                per_topic=options["per_topic"],
                terse=options["terse"],
                stale=not options["no_stale"],
            )
            self.stdout.write(text.stdout, ending="")
            if text.stderr:
                self.stderr.write(text.stderr, ending="")
            return
        for result in results:
            if len(results) > 1:
                self.stdout.write(f"run\t{result.name}")
            for line in format_rows(
                statap_rows(result, per_topic=options["per_topic"])
            ):
                self.stdout.write(line)
