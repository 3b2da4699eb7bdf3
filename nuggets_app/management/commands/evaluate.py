"""``manage.py evaluate``: standard measures (ir_measures) or statAP, like trec_eval.

File mode: ``evaluate --qrels FILE RUN [RUN ...]`` or ``evaluate --prels FILE RUN ...``;
expected measures (EAP, EP@k, EnDCG@k) under probabilistic qrels: ``evaluate --expected
FILE RUN ...`` (``export_qrels --kind probabilistic``) or ``evaluate --job N RUN ...``
(the job's fitted model, human judgments overriding; with ``--collection``, stored
runs); ``evaluate --job N --graded``: expected nDCG with the gains of the job's ordinal
model (a judged document's grade, an unjudged one's expected grade). With ``--job`` and
a sample of the job's pool (``--sample NAME``, else the job's own or the pool's newest),
each run's block also has the model-assisted estimates (``maAP``, ``maP@30``,
``maRprec`` with ``_ci_low``/``_ci_high``), ``ma_topics``, ``statMAP``, ``EAP_check``,
``bias_diff`` and ``bias_flag`` (``services.estimates``); what they mean goes to stderr.
Run files given with ``--job`` are new runs when they are not runs of the job's pool:
their documents outside the pool (down to its depth) are scored for the job first
(kept; on the workers when many) and enter the estimates with the model's p alone, and
each block adds ``pooled``, ``docs_retrieved``, ``docs_pooled``, ``docs_unpooled``,
``docs_below_depth``, ``docs_not_in_collection`` and ``topics_outside_job``
(``services.new_runs``).
Database mode: ``evaluate --collection NAME --qrels-name NAME [--run NAME ...]`` (prels
stored in the database give the statAP measures, subtopic qrels the diversity measures). Output: ``measure<TAB>topic<TAB>value``
lines per run, ``all`` for the mean, and ``run<TAB>NAME`` before each run's block when
there are several. The inputs are read by ``services.inputs``, shared with ``statap``,
``compare_qrels`` and ``evaluate_passages``.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.selectors import (
    stored_qrels,
    stored_subtopic_qrels,
)
from nuggets_app.evaluation.services.estimates import (
    FLAG_NOTE,
    INTERVAL_NOTE,
    MODEL_ONLY_NOTE,
    EstimateError,
    RunEstimates,
    estimate_rows,
    estimate_sample,
    flag_reasons,
    job_model_only_topics,
    job_sample_estimates,
)
from nuggets_app.evaluation.services.inputs import (
    NamedRun,
    db_prels,
    db_runs,
    find_qrels,
    format_rows,
    job_expected,
    read_expected_file,
    read_prels_file,
    read_qrels_file,
    read_run_file,
    read_subtopic_qrels_file,
)
from nuggets_app.evaluation.services.new_runs import (
    NEW_RUN_NOTE,
    NOT_IN_COLLECTION_RULE,
    NewRunsEvaluation,
    new_run_rows,
    new_runs_wait,
)
from nuggets_app.evaluation.services.outside_pool import (
    NewRunFigures,
    new_run_flag_reason,
    top_up_advice,
)
from nuggets_app.ir.diversity import DiversityError, diversity_evaluate
from nuggets_app.ir.expected import EXPECTED_MEASURES, run_expected
from nuggets_app.ir.measures import DEFAULT_MEASURES, run_evaluate
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.ir.statap import statap_evaluate, statap_rows
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.management.commands._base import (
    add_run_names_argument,
    input_errors,
)
from nuggets_app.models import MatchJob, Qrels

# Expected nDCG at the usual cut-off and over (nearly) the whole ranking.
GRADED_EXPECTED_MEASURES = ("EnDCG@10", "EnDCG@100")


class Command(BaseCommand):
    help = (
        "Evaluate runs: standard measures through ir_measures (--qrels) or statAP with "
        "95% confidence intervals (--prels), from files or from the database."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="*", metavar="RUN", help="TREC run files")
        parser.add_argument("--qrels", metavar="FILE", help="TREC qrels file")
        parser.add_argument("--prels", metavar="FILE", help="prels file (statAP)")
        parser.add_argument(
            "--expected",
            metavar="FILE",
            help="probabilistic qrels file: expected measures (EAP, EP@10, EnDCG@10)",
        )
        parser.add_argument(
            "--job",
            type=int,
            metavar="N",
            help="expected measures under matching job N's probabilities; run files "
            "not in its pool are evaluated as new runs (their unpooled documents "
            "scored for the job)",
        )
        parser.add_argument(
            "--graded",
            action="store_true",
            help="with --job: expected nDCG (EnDCG@10, EnDCG@100) with the expected "
            "grades of the job's ordinal model as gains",
        )
        parser.add_argument(
            "--subtopic-qrels",
            metavar="FILE",
            help="diversity qrels 'qid subtopic docno rel': alpha-nDCG@k, ERR-IA@k "
            "and subtopic recall@k (k = --depth)",
        )
        parser.add_argument(
            "--depth", type=int, default=20, help="k of the diversity measures"
        )
        parser.add_argument("--collection", help="database mode: collection name")
        parser.add_argument(
            "--qrels-name",
            help="database mode: stored qrels, prels (statAP) or subtopic qrels "
            "(diversity measures)",
        )
        add_run_names_argument(parser)
        parser.add_argument(
            "--sample",
            metavar="NAME",
            help="with --job: the sample of the job's pool whose judgments give the "
            "model-assisted estimates (default: the job's own, else the newest)",
        )
        parser.add_argument(
            "--measures",
            nargs="+",
            default=list(DEFAULT_MEASURES),
            metavar="MEASURE",
            help="ir_measures names (default: %(default)s)",
        )
        parser.add_argument(
            "--summary", action="store_true", help="print only the 'all' lines"
        )

    def handle(self, *args, **options) -> None:
        with input_errors():
            self._handle(options)

    def _handle(self, options) -> None:
        if options["subtopic_qrels"]:
            self._diversity(options)
            return
        if options["collection"] and options["qrels_name"]:
            stored = find_qrels(options["collection"], options["qrels_name"])
            if stored.kind == Qrels.Kind.SUBTOPICS:
                self._diversity(options, stored)
                return
        if options["expected"] or options["job"] is not None or options["graded"]:
            self._expected(options)
            return
        runs, qrels, prels = self._inputs(options)
        per_topic = not options["summary"]
        for run in runs:
            if len(runs) > 1:
                self.stdout.write(f"run\t{run.name}")
            if prels is not None:
                result = statap_evaluate(prels, run.scores)
                rows = statap_rows(result, per_topic=per_topic)
            else:
                try:
                    evaluation = run_evaluate(
                        qrels, run.scores, measures=options["measures"]
                    )
                except DomainError as error:
                    raise CommandError(str(error)) from None
                rows = evaluation.rows(per_topic=per_topic)
            for line in format_rows(rows):
                self.stdout.write(line)

    def _diversity(self, options, stored: Qrels | None = None) -> None:
        """Diversity measures of every run under subtopic qrels, from a file or
        (``stored``) from the database."""
        if stored is not None:
            qrels = stored_subtopic_qrels(stored)
            if options["runs"]:
                raise CommandError("database mode takes no files (use --run NAME ...)")
            runs = db_runs(stored.collection.name, options["run_names"])
        else:
            if not options["runs"]:
                raise CommandError("give at least one RUN file")
            qrels = read_subtopic_qrels_file(options["subtopic_qrels"])
            runs = [read_run_file(p) for p in options["runs"]]
        for run in runs:
            if len(runs) > 1:
                self.stdout.write(f"run\t{run.name}")
            try:
                result = diversity_evaluate(qrels, run.scores, k=options["depth"])
            except DiversityError as exc:
                raise CommandError(str(exc)) from exc
            rows = []
            for measure in result.mean:
                if not options["summary"]:
                    rows += [
                        (measure, qid, values[measure])
                        for qid, values in sorted(result.per_topic.items())
                    ]
                rows.append((measure, "all", result.mean[measure]))
            for line in format_rows(rows):
                self.stdout.write(line)

    def _expected(self, options) -> None:
        """Expected measures of every run under probabilistic qrels."""
        if options["qrels"] or options["prels"]:
            raise CommandError("--expected and --job take no --qrels or --prels")
        if options["expected"] and options["job"] is not None:
            raise CommandError("give one of --expected FILE and --job N")
        graded = options["graded"]
        if graded and options["job"] is None:
            raise CommandError("--graded needs --job N (the job's ordinal model)")
        measures = (
            options["measures"]
            if options["measures"] != list(DEFAULT_MEASURES)
            else list(GRADED_EXPECTED_MEASURES if graded else EXPECTED_MEASURES)
        )
        if graded and any(not m.startswith("EnDCG@") for m in measures):
            raise CommandError(
                "--graded gives expected nDCG only (EnDCG@k): EAP and EP@k need "
                "probabilities of binary relevance"
            )
        collection = options["collection"]
        if options["job"] is not None:
            job, probs = job_expected(options["job"], graded=graded)
            collection = collection or job.collection.name
        else:
            probs = read_expected_file(options["expected"])
        self._files = bool(options["runs"])
        self._documents: NewRunsEvaluation | None = None
        if options["runs"]:
            runs = [read_run_file(p) for p in options["runs"]]
        elif collection is not None:
            runs = db_runs(collection, options["run_names"])
        else:
            raise CommandError("give at least one RUN file")
        per_topic = not options["summary"]
        estimates = None
        if options["job"] is not None and not graded:
            estimates = self._estimates(job, runs, options["sample"])
        if self._documents is not None:
            # A new run's unpooled documents: EAP counts them with their p too.
            probs = {
                q: {**self._documents.unpooled_p.get(q, {}), **docs}
                for q, docs in probs.items()
            }
        for run in runs:
            if len(runs) > 1:
                self.stdout.write(f"run\t{run.name}")
            try:
                result = run_expected(probs, run.scores, measures=measures)
            except DomainError as error:
                raise CommandError(str(error)) from None
            for line in format_rows(result.rows(per_topic=per_topic)):
                self.stdout.write(line)
            if estimates is not None:
                rows = estimate_rows(estimates[run.name], per_topic=per_topic)
                if self._documents is not None:
                    rows = [*rows, *new_run_rows(self._documents, run.name)]
                for line in format_rows(rows):
                    self.stdout.write(line)
        if estimates is not None:
            self.stderr.write(f"# {INTERVAL_NOTE}\n# {FLAG_NOTE}")
            rule = aggregation_of(job.collection).describe()
            self.stderr.write(f"# human labels: {rule}")
            figures: dict[str, NewRunFigures] = (
                self._documents.figures if self._documents is not None else {}
            )
            for name, reason in flag_reasons(estimates).items():
                if name in figures:
                    reason = new_run_flag_reason(figures[name], reason)
                self.stderr.write(f"# {name} flagged: {reason}")
        if self._documents is not None:
            self.stderr.write(f"# {NEW_RUN_NOTE}\n# {NOT_IN_COLLECTION_RULE}")
            for name, figures in sorted(self._documents.figures.items()):
                advice = top_up_advice(figures, job_id=self._job_id, run=name)
                if advice:
                    self.stderr.write(f"# {name}: {advice}")

    def _estimates(
        self, job: MatchJob, runs: list[NamedRun], sample_name: str | None
    ) -> dict[str, RunEstimates] | None:
        """Model-assisted estimates of the runs (None, with a note on stderr, when
        the job's pool has no sample)."""
        try:
            sample = estimate_sample(job, sample_name)
            if sample is None:
                self.stderr.write(
                    f"# no sample of job {job.pk}'s pool: no model-assisted estimates"
                )
                return None
            fitted = job.inference.fit_sample if hasattr(job, "inference") else None
            self.stderr.write(
                f"# job {job.pk}: {job.relevance_text()}; model fitted with the design "
                f"of sample {fitted.name if fitted else '(none: equal weights)'}; "
                f"estimates from the judgments of sample {sample.name}"
            )
            blind = job_model_only_topics(job=job, sample=sample)
            if blind:
                self.stderr.write(
                    f"# topics without a relevant judged document: {', '.join(blind)}"
                    f"\n# {MODEL_ONLY_NOTE}"
                )
            scores = {run.name: run.scores for run in runs}
            if not self._files:
                return job_sample_estimates(job=job, sample=sample, runs=scores)
            self._job_id = job.pk
            found = new_runs_wait(job=job, sample=sample, runs=scores, say=self._say)
        except EstimateError as error:
            raise CommandError(str(error)) from None
        self._documents = found
        return found.estimates

    def _say(self, message: str) -> None:
        self.stderr.write(f"# {message}")

    def _inputs(
        self, options
    ) -> tuple[list[NamedRun], dict[str, dict[str, int]], dict[str, TopicPrels] | None]:
        """Runs, and qrels or (for statAP) prels, from files or the database."""
        if options["collection"]:
            if options["runs"] or options["qrels"] or options["prels"]:
                raise CommandError("database mode takes no files (use --run NAME ...)")
            if not options["qrels_name"]:
                raise CommandError("--collection needs --qrels-name")
            stored = find_qrels(options["collection"], options["qrels_name"])
            runs = db_runs(options["collection"], options["run_names"])
            if stored.kind == Qrels.Kind.PRELS:
                return runs, {}, db_prels(stored)
            return runs, stored_qrels(stored), None
        if bool(options["qrels"]) == bool(options["prels"]):
            raise CommandError("give exactly one of --qrels FILE and --prels FILE")
        if not options["runs"]:
            raise CommandError("give at least one RUN file")
        if options["prels"]:
            prels = read_prels_file(options["prels"])
            return (
                [read_run_file(p, contiguous=True) for p in options["runs"]],
                {},
                prels,
            )
        qrels = read_qrels_file(options["qrels"])
        return [read_run_file(p) for p in options["runs"]], qrels, None
