"""``manage.py compare_qrels``: the system rankings two qrels induce, and how they differ.

File mode: ``compare_qrels --qrels A --qrels-b B RUN [RUN ...]``; database mode:
``compare_qrels --collection NAME --qrels-name A --qrels-name-b B [--run NAME ...]``.
Each run is scored with one measure (``--measure``, an ir_measures name, default AP)
under both qrels, averaged over the topics both qrels judge (the others are named on
stderr; with no topic in common the command refuses). Output (tab separated): the
measure, the number of topics compared, the number of runs, Kendall's tau, tau_AP (B
against A) and its symmetric mean, then one line per run, the runs that move most
first: ``run NAME score_a score_b rank_a rank_b delta``. ``--plot FILE.svg``
draws the per-run scores under A against B, the same SVG scatter as the compare page.

Uncertainty mode: ``compare_qrels --prels P --expected FILE RUN ...`` (or ``--job N``
for a matching job's probabilities, human judgments overriding): A is statMAP under
the prels, B is expected MAP (EAP) under the probabilistic qrels, and the runs whose
rank differs most between the two come first; each run line ends with ``bias_flag``
(1 when the 95% interval of EAP - shift x statMAP, over the topics valid for both,
with the EAP/statMAP ratio common to every run as the shift, excludes 0:
:func:`nuggets_app.ir.model_assisted.bias_check`), explained on stderr.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.selectors import stored_qrels
from nuggets_app.evaluation.services.comparison import qrels_compare
from nuggets_app.evaluation.services.estimates import FLAG_NOTE, flag_reason
from nuggets_app.evaluation.services.figures import chart_svg, ranking_scatter
from nuggets_app.evaluation.services.inputs import (
    NamedRun,
    db_runs,
    find_qrels,
    format_value,
    job_expected,
    read_expected_file,
    read_prels_file,
    read_qrels_file,
    read_run_file,
)
from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.estimator import Estimator
from nuggets_app.ir.expected import run_expected
from nuggets_app.ir.ranking import RankingComparison, ranking_compare
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.management.commands._base import (
    add_run_names_argument,
    input_errors,
)

Judgments = dict[str, dict[str, int]]

# The bias check's model-assisted AP here only chooses the topics valid for every
# estimator compared: tuned p, unbounded, so a topic counts only where the model-assisted
# R̂ itself is positive (no floor at the relevant documents judged).
CHECK_ESTIMATOR = Estimator(bounded=False, beale=None, interval="linearised")


def plot_scatter(
    path: str,
    labels: tuple[str, str],
    a: dict[str, float],
    b: dict[str, float],
    comparison: RankingComparison,
    title: str,
) -> None:
    """Per-run scores under A (x) and B (y), with the diagonal, as the SVG the
    compare page draws (the runs that move most labelled)."""
    chart = ranking_scatter(
        a,
        b,
        moved={m.run: m.delta for m in comparison.moves},
        xlabel=labels[0],
        ylabel=labels[1],
        title=title,
    )
    Path(path).write_text(chart_svg(chart), encoding="utf-8")


class Command(BaseCommand):
    help = (
        "Compare the system rankings of two qrels: Kendall's tau, tau_AP, the runs "
        "that move most, and an optional scatter plot."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="*", metavar="RUN", help="TREC run files")
        parser.add_argument("--qrels", metavar="A", help="reference qrels file")
        parser.add_argument("--qrels-b", metavar="B", help="qrels file to compare")
        parser.add_argument("--collection", help="database mode: collection name")
        parser.add_argument("--qrels-name", metavar="A", help="database mode: qrels A")
        parser.add_argument(
            "--qrels-name-b", metavar="B", help="database mode: qrels B"
        )
        add_run_names_argument(parser)
        parser.add_argument("--measure", default="AP", help="ir_measures name (AP)")
        parser.add_argument(
            "--prels", metavar="P", help="uncertainty mode: statMAP under these prels"
        )
        parser.add_argument(
            "--expected", metavar="FILE", help="uncertainty mode: EAP under this file"
        )
        parser.add_argument(
            "--job", type=int, metavar="N", help="uncertainty mode: EAP under job N"
        )
        parser.add_argument(
            "--plot", metavar="FILE.svg", help="write the scatter plot as SVG"
        )

    def handle(self, *args, **options) -> None:
        with input_errors():
            self._handle(options)

    def _handle(self, options) -> None:
        if options["plot"] and not options["plot"].lower().endswith(".svg"):
            raise CommandError("--plot writes SVG: give a FILE.svg")
        if options["prels"] or options["expected"] or options["job"] is not None:
            self._uncertainty(options)
            return
        runs, qrels_a, qrels_b = self._inputs(options)
        names = [r.name for r in runs]
        if len(set(names)) != len(names):
            raise CommandError(
                "two runs have the same name; each run needs its own tag"
            )
        try:
            compared = qrels_compare(
                runs={r.name: r.scores for r in runs},
                qrels_a=qrels_a,
                qrels_b=qrels_b,
                measure=options["measure"],
            )
        except DomainError as error:  # no topic in common, an unknown measure
            raise CommandError(str(error)) from None
        comparison, measure = compared.ranking, options["measure"]
        self._write(measure, comparison, topics=len(compared.topics.common))
        self.stderr.write(f"# {compared.topics.sentence()}")
        if options["plot"]:
            title = (
                f"Kendall tau {comparison.kendall_tau:.3f}, "
                f"tau_AP {comparison.tau_ap:.3f} ({comparison.runs} runs, "
                f"{len(compared.topics.common)} topics)"
            )
            plot_scatter(
                options["plot"],
                (f"{measure} under qrels A", f"{measure} under qrels B"),
                compared.scores_a,
                compared.scores_b,
                comparison,
                title,
            )

    def _uncertainty(self, options) -> None:
        """statMAP (A) against expected MAP (B): the runs that move most first."""
        if not options["prels"] or (options["expected"] is None) == (
            options["job"] is None
        ):
            raise CommandError("give --prels P and one of --expected FILE or --job N")
        prels = read_prels_file(options["prels"])
        if options["job"] is not None:
            _, probs = job_expected(options["job"])
        else:
            probs = read_expected_file(options["expected"])
        runs = [read_run_file(path, contiguous=True) for path in options["runs"]]
        if len(runs) < 2:
            raise CommandError("comparing rankings needs at least two runs")
        scores_a = {
            r.name: statap_evaluate(prels, r.scores).summary.stat_map for r in runs
        }
        scores_b = {
            r.name: run_expected(probs, r.scores, measures=["EAP"]).mean["EAP"]
            for r in runs
        }
        comparison = ranking_compare(scores_a, scores_b)
        checks = bias_check(
            prels,
            probs,
            {r.name: r.scores for r in runs},
            estimator=CHECK_ESTIMATOR,
        )
        self._write(
            "statMAP vs EAP", comparison, flags={c.run: c.flagged for c in checks}
        )
        self.stderr.write(f"# bias_flag: {FLAG_NOTE}")
        for check in sorted(checks, key=lambda c: c.run):
            if check.flagged:
                self.stderr.write(f"# {check.run} flagged: {flag_reason(check)}")
        if options["plot"]:
            title = f"Kendall tau {comparison.kendall_tau:.3f} ({comparison.runs} runs)"
            plot_scatter(
                options["plot"],
                ("statMAP under the prels (A)", "EAP under the probabilities (B)"),
                scores_a,
                scores_b,
                comparison,
                title,
            )

    def _write(
        self,
        measure: str,
        c: RankingComparison,
        flags: dict[str, bool] | None = None,
        topics: int | None = None,
    ) -> None:
        """The comparison; ``flags`` adds a ``bias_flag`` column (1 or 0), ``topics``
        the number of topics compared."""
        extra = "\tbias_flag" if flags is not None else ""
        lines = [
            f"measure\t{measure}",
            *([f"topics\t{topics}"] if topics is not None else []),
            f"runs\t{c.runs}",
            f"kendall_tau\t{format_value('', c.kendall_tau)}",
            f"tau_ap\t{format_value('', c.tau_ap)}",
            f"tau_ap_symmetric\t{format_value('', c.tau_ap_symmetric)}",
            f"run\tscore_a\tscore_b\trank_a\trank_b\tdelta{extra}",
        ]
        lines += [
            f"{m.run}\t{format_value('', m.score_a)}\t{format_value('', m.score_b)}"
            f"\t{m.rank_a}\t{m.rank_b}\t{m.delta:+d}"
            + (f"\t{int(flags.get(m.run, False))}" if flags is not None else "")
            for m in c.moves
        ]
        for line in lines:
            self.stdout.write(line)

    def _inputs(self, options) -> tuple[list[NamedRun], Judgments, Judgments]:
        """Runs and the two qrels, from files or from the database."""
        if options["collection"]:
            if options["runs"] or options["qrels"] or options["qrels_b"]:
                raise CommandError("database mode takes no files (use --run NAME ...)")
            if not (options["qrels_name"] and options["qrels_name_b"]):
                raise CommandError("--collection needs --qrels-name and --qrels-name-b")
            collection = options["collection"]
            qrels_a = stored_qrels(find_qrels(collection, options["qrels_name"]))
            qrels_b = stored_qrels(find_qrels(collection, options["qrels_name_b"]))
            runs = db_runs(collection, options["run_names"])
        else:
            if not (options["qrels"] and options["qrels_b"]):
                raise CommandError("give --qrels A and --qrels-b B (or database names)")
            if not options["runs"]:
                raise CommandError("give at least one RUN file")
            qrels_a = read_qrels_file(options["qrels"])
            qrels_b = read_qrels_file(options["qrels_b"])
            runs = [read_run_file(path) for path in options["runs"]]
        if len(runs) < 2:
            raise CommandError("comparing rankings needs at least two runs")
        return runs, qrels_a, qrels_b
