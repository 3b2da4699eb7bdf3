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
there are several. The readers here are shared with ``statap`` and ``compare_qrels``; stored qrels and runs
are read through ``selectors_eval``, as the evaluation pages read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.selectors import (
    SourceError,
    job_probability_qrels,
    stored_qrels,
    stored_subtopic_qrels,
)
from nuggets_app.evaluation.selectors import run_scores as stored_run_scores
from nuggets_app.evaluation.services.estimates import (
    FLAG_NOTE,
    INTERVAL_NOTE,
    MODEL_ONLY_NOTE,
    EstimateError,
    RunEstimates,
    estimate_rows,
    estimate_sample,
    job_model_only_topics,
    job_sample_estimates,
)
from nuggets_app.evaluation.services.new_runs import (
    NEW_RUN_COUNTS,
    NEW_RUN_NOTE,
    NOT_IN_COLLECTION_RULE,
    new_run_rows,
    new_runs_wait,
)
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.qrels import PLACEHOLDER_REL, parse_qrels
from nuggets_app.importers.runs import parse_run
from nuggets_app.inference.services.exports import ExportError
from nuggets_app.inference.services.graded import job_expected_gains
from nuggets_app.ir.diversity import (
    DiversityError,
    diversity_evaluate,
    subtopic_qrels_parse,
)
from nuggets_app.ir.expected import EXPECTED_MEASURES, run_expected
from nuggets_app.ir.measures import DEFAULT_MEASURES, run_evaluate
from nuggets_app.ir.prels import (
    PrelsRecord,
    StatapInputError,
    TopicPrels,
    prels_load,
    run_scores,
)
from nuggets_app.ir.statap import statap_evaluate, statap_rows
from nuggets_app.models import MatchJob, Qrels, QrelsEntry, Run

INTEGER_MEASURES = frozenset(
    {
        "valid_topics",
        "NumQ",
        "NumRel",
        "NumRet",
        "NumRelRet",
        "ma_topics",
        "ma_model_only",
        "bias_flag",
    }
    | set(NEW_RUN_COUNTS)
)

RunScores = dict[str, dict[str, float]]


@dataclass(frozen=True)
class NamedRun:
    """A run's name (its tag, or its name in the database) and its scores."""

    name: str
    scores: RunScores


def input_errors(action):
    """Run ``action()``, turning bad input into a ``FILE:LINE: problem`` CommandError."""
    try:
        return action()
    except (ImportFormatError, StatapInputError) as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"{error.filename}: {error.strerror}") from None


def read_run_file(path: str, *, contiguous: bool = False) -> NamedRun:
    """A TREC run file; ``contiguous`` also rejects topics split over several blocks."""

    def read() -> NamedRun:
        lines = list(parse_run(path))
        if contiguous:
            scores = run_scores(
                ((x.line, x.qid, x.docno, x.score) for x in lines), source=path
            )
        else:
            scores = {}
            for x in lines:
                scores.setdefault(x.qid, {})[x.docno] = x.score
        return NamedRun(lines[0].tag, scores)

    return input_errors(read)


def read_qrels_file(path: str) -> dict[str, dict[str, int]]:
    """TREC qrels (or prels, relevance only; placeholder rows dropped)."""

    def read() -> dict[str, dict[str, int]]:
        qrels: dict[str, dict[str, int]] = {}
        for record in parse_qrels(path, kind="auto"):
            if record.rel != PLACEHOLDER_REL:
                qrels.setdefault(record.qid, {})[record.docno] = record.rel
        return qrels

    return input_errors(read)


def read_expected_file(path: str) -> dict[str, dict[str, float]]:
    """Probabilistic qrels (``qid docno rel p pi source``) as ``qid -> {docno: p}``."""

    def read() -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for record in parse_qrels(path, kind="prob"):
            out.setdefault(record.qid, {})[record.docno] = float(
                record.probability or 0.0
            )
        return out

    return input_errors(read)


# Expected nDCG at the usual cut-off and over (nearly) the whole ranking.
GRADED_EXPECTED_MEASURES = ("EnDCG@10", "EnDCG@100")


def job_expected(
    job_id: int, *, graded: bool = False
) -> tuple[MatchJob, dict[str, dict[str, float]]]:
    """A job and its probabilistic qrels (its model's p, human judgments overriding),
    or with ``graded`` its expected gains (the ordinal model's expected grades)."""
    job = MatchJob.objects.select_related("collection").filter(pk=job_id).first()
    if job is None:
        raise CommandError(f"no matching job {job_id}")
    try:
        if graded:
            return job, job_expected_gains(job)
        return job, job_probability_qrels(job)
    except ExportError as error:
        raise CommandError(str(error)) from None
    except SourceError as error:
        raise CommandError(
            f"{error} (fit it: manage.py match --fit {job_id})"
        ) from None


def read_prels_file(path: str, *, sampled_only: bool = False) -> dict[str, TopicPrels]:
    """prels for statAP (``sampled_only`` is the NIST script's ``-f``)."""
    return input_errors(
        lambda: prels_load(
            parse_qrels(path, kind="prels"), source=path, sampled_only=sampled_only
        )
    )


def find_qrels(collection: str, name: str) -> Qrels:
    """The stored qrels of that name in that collection."""
    try:
        return Qrels.objects.get(collection__name=collection, name=name)
    except Qrels.DoesNotExist:
        raise CommandError(f"no qrels {name!r} in collection {collection!r}") from None


def db_prels(qrels: Qrels, *, sampled_only: bool = False) -> dict[str, TopicPrels]:
    """Stored prels loaded for statAP, topics kept contiguous."""
    rows = (
        QrelsEntry.objects.filter(qrels=qrels)
        .order_by("topic__qid", "id")
        .values_list(
            "topic__qid", "document__docno", "relevance", "method", "inclusion_prob"
        )
    )
    records = (
        PrelsRecord(number, qid, docno, rel, method, prob)
        for number, (qid, docno, rel, method, prob) in enumerate(rows.iterator(), 1)
    )
    source = f"{qrels.collection.name}/{qrels.name}"
    return input_errors(
        lambda: prels_load(records, source=source, sampled_only=sampled_only)
    )


def add_run_names_argument(parser: CommandParser) -> None:
    """``--run NAME ...`` (``run_names``), the stored runs :func:`db_runs` reads."""
    parser.add_argument(
        "--run",
        dest="run_names",
        nargs="+",
        metavar="NAME",
        help="database mode: stored runs (default: all runs of the collection)",
    )


def db_runs(collection: str, names: Iterable[str] | None) -> list[NamedRun]:
    """Stored runs by name (all runs of the collection when ``names`` is None)."""
    runs = Run.objects.filter(collection__name=collection).order_by("name")
    if names is not None:
        wanted = list(names)
        runs = runs.filter(name__in=wanted)
        missing = sorted(set(wanted) - set(runs.values_list("name", flat=True)))
        if missing:
            raise CommandError(
                f"no run {', '.join(missing)} in collection {collection!r}"
            )
    return [NamedRun(run.name, stored_run_scores(run)) for run in runs]


def format_value(measure: str, value: float) -> str:
    """Full precision (``repr``), ``NaN`` for undefined, integers for counts."""
    if math.isnan(value):
        return "NaN"
    if measure in INTEGER_MEASURES:
        return str(int(value))
    return repr(float(value))


def format_rows(rows: Iterable[tuple[str, str, float]]) -> Iterator[str]:
    """``measure<TAB>topic<TAB>value`` lines."""
    for measure, topic, value in rows:
        yield f"{measure}\t{topic}\t{format_value(measure, value)}"


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
                except ValueError as error:
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
            path = options["subtopic_qrels"]
            if not options["runs"]:
                raise CommandError("give at least one RUN file")
            try:
                with open(path, encoding="utf-8") as fh:
                    qrels = subtopic_qrels_parse(fh, source=path)
            except OSError as exc:
                raise CommandError(f"{path}: cannot read ({exc.strerror})") from exc
            except DiversityError as exc:
                raise CommandError(str(exc)) from exc
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
        self._documents = None
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
            except ValueError as error:
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
        if self._documents is not None:
            self.stderr.write(f"# {NEW_RUN_NOTE}\n# {NOT_IN_COLLECTION_RULE}")

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
            blind = job_model_only_topics(job=job, sample=sample)
            if blind:
                self.stderr.write(
                    f"# topics without a relevant judged document: {', '.join(blind)}"
                    f"\n# {MODEL_ONLY_NOTE}"
                )
            scores = {run.name: run.scores for run in runs}
            if not self._files:
                return job_sample_estimates(job=job, sample=sample, runs=scores)
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
            qrels = find_qrels(options["collection"], options["qrels_name"])
            runs = db_runs(options["collection"], options["run_names"])
            if qrels.kind == Qrels.Kind.PRELS:
                return runs, {}, db_prels(qrels)
            return runs, stored_qrels(qrels), None
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
