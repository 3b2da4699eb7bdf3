"""``manage.py simulate``: the nugget paradigm end to end with a simulated assessor."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.maths.simulation import ExtractionOptions
from lab.services.report_json import json_safe
from lab.services.simulation import SimulationData, simulation_run
from lab.services.simulation_config import (
    SIMULATED_ASSESSOR,
    SimulationConfig,
)
from lab.services.simulation_judges import SimulationJudgeError, judge_spec
from lab.services.simulation_report import report_build, report_write
from lab.services.simulation_reuse import (
    MODES,
    config_dict,
    reusability_run,
)
from lab.services.simulation_rounds import RoundsData, rounds_run
from nuggets_app.collection.services.imports import runs_import
from nuggets_app.errors import DomainError
from nuggets_app.ir.reusability import groups_parse
from nuggets_app.learning import embeddings
from nuggets_app.learning.ablation import FAMILIES, ablate_parse
from nuggets_app.learning.relevance_features import RelevanceModelError
from nuggets_app.models import Collection, Run

SUMMARY_KEYS = (
    "pool_size",
    "judged",
    "nuggets",
    "inferred_relevant",
    "matcher_map",
    "baseline_map",
    "precision",
    "recall",
    "map_unjudged",
    "baseline_map_unjudged",
    "expected_relevant",
    "true_relevant_unjudged",
)
# Why a summary figure is null (JSON has no NaN): the quotient it is has no denominator.
UNDEFINED = {
    "precision": "no unjudged document was inferred relevant, so there is no "
    "precision of the inferred relevant ones",
    "recall": "no unjudged document is relevant in the full qrels, so there is no "
    "recall to measure",
}


def sample_size(text: str) -> tuple[int, float | None]:
    """``N`` documents per topic, or ``P%`` of the mean pool size per topic."""
    try:
        if text.endswith("%"):
            fraction = float(text[:-1]) / 100
            if not 0 < fraction <= 1:
                raise ValueError
            return 0, fraction
        size = int(text)
        if size < 1:
            raise ValueError
        return size, None
    except ValueError:
        raise CommandError(
            f"--sample-size: expected a positive integer or a percentage, got {text!r}"
        ) from None


def _ablate(text: str) -> tuple[str, ...]:
    """``--ablate nuggets,topic``: the feature families, checked."""
    try:
        return ablate_parse(text)
    except RelevanceModelError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _judge(text: str) -> tuple[str, str]:
    """``--judge-labels NAME=FILE`` (or ``FILE``): the judge's name and file."""
    try:
        return judge_spec(text)
    except SimulationJudgeError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class Command(BaseCommand):
    help = (
        "Pool the runs, draw a statAP sample, let a simulated assessor judge it from "
        "the qrels and extract nuggets, match the pool, infer qrels, and report."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True)
        parser.add_argument(
            "--qrels", required=True, help="full TREC qrels (the truth)"
        )
        parser.add_argument("--depth", type=int, default=100, help="pool depth")
        parser.add_argument(
            "--sample-size",
            default="10",
            help="documents per topic, or P%% of the pool",
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--runs",
            help="directory of TREC run files to import and pool (else all "
            "runs of the collection)",
        )
        parser.add_argument("--nuggets-per-doc", type=int, default=2)
        parser.add_argument("--max-terms", type=int, default=12, help="nugget length")
        parser.add_argument("--min-terms", type=int, default=3)
        parser.add_argument("--keywords", type=int, default=2)
        parser.add_argument(
            "--rule",
            default="threshold:0.5",
            help="threshold:X | top:N | fit:f1 | fit:f1:per-topic (best F1 on the "
            "held-out judged documents)",
        )
        parser.add_argument(
            "--inference",
            choices=["model", "paper"],
            default="model",
            help="model: the relevance model's probabilities (default); paper: the "
            "matcher score with --rule",
        )
        parser.add_argument(
            "--nuggets",
            choices=["simulated", "human"],
            default="simulated",
            help="simulated: nuggets cut from the judged relevant documents by the "
            "sentence heuristic; human: a nugget bank's nuggets whose source span is in "
            "a judged relevant document (import_nuggets with docno/start/end)",
        )
        parser.add_argument(
            "--bank", help="the nugget bank for --nuggets human (default: the only one)"
        )
        parser.add_argument("--k", type=int, default=3, help="shingle size")
        parser.add_argument("--lam", type=float, default=0.5, help="span decay lambda")
        parser.add_argument(
            "--relevance-level",
            type=int,
            default=1,
            help="relevant at grade >= this (TREC DL: 2); recorded on the job",
        )
        parser.add_argument(
            "--assessor",
            default=SIMULATED_ASSESSOR,
            help="the simulated assessor's user name",
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace the simulated assessor's earlier judgments on this "
            "collection and delete the jobs fitted on them (else refused)",
        )
        parser.add_argument("--out", help="directory for report.md, report.json, plots")
        parser.add_argument(
            "--reusability",
            choices=MODES,
            help="hold each run (or group of runs) out of the pool, simulate with the "
            "others and evaluate the held-out runs as new: report.json gets "
            "'reusability' (per estimator: mean_abs_rank_error, max_rank_drop, "
            "mean_rel_error, tau) and per-run rows",
        )
        parser.add_argument(
            "--groups",
            metavar="FILE",
            help="with --reusability leave-one-group-out: 'RUN GROUP' lines (default: "
            "groups by the shared prefix of the run names)",
        )
        parser.add_argument(
            "--top-up",
            type=int,
            default=0,
            metavar="K",
            help="with --reusability: judge a top-up of K draws per topic of each "
            "held-out run's unpooled documents with the simulated assessor and "
            "estimate it again (report.json runs[i].top_up)",
        )
        parser.add_argument(
            "--semantic",
            action="store_true",
            help="fit the job's model with the semantic features, for pooled and "
            "unpooled documents (needs requirements-semantic.txt; the job's "
            "documents and nuggets are embedded once and kept)",
        )
        parser.add_argument(
            "--keep-nuggets",
            action="store_true",
            help="always keep the nugget features (default: the job keeps them only "
            "where its held-out log-loss says they pay); report.json families",
        )
        parser.add_argument(
            "--ablate",
            metavar="FAMILY[,FAMILY]",
            type=_ablate,
            default=(),
            help="fit the relevance model without these feature families ("
            + ", ".join(FAMILIES)
            + "); recorded in report.json config.ablate",
        )
        parser.add_argument(
            "--judge-labels",
            metavar="[NAME=]FILE",
            action="append",
            type=_judge,
            default=[],
            help="import this judge's labels file (any import_judge_labels format) "
            "as a judge of the collection before the job's fit (NAME: the file's "
            "stem when not given); repeatable; report.json families.judges says "
            "which the fit kept",
        )
        parser.add_argument(
            "--judge-table",
            metavar="[NAME=]FILE",
            action="append",
            type=_judge,
            default=[],
            help="draw a judge for the pool from this table P(judge grade | people's "
            "grade) (JSON, lab/studies/judges/judge_tables.py) with --seed, and "
            "import it as --judge-labels does; repeatable",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            default=1,
            help="draw the sample (--sample-size: the total budget) in this many "
            "rounds, later ones guided by the relevance model (default 1: one shot)",
        )
        parser.add_argument(
            "--round-design",
            choices=["model", "top"],
            default="model",
            help="later rounds: model-guided unbiased draws, or the most probable "
            "documents (HiCAL-style, biased; for reference)",
        )

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection named {options['collection']}")
        size, fraction = sample_size(options["sample_size"])
        self.stderr.write(embeddings.semantic_status())
        if options["semantic"] and not embeddings.semantic_available():
            raise CommandError(f"--semantic: {embeddings.OFF_MESSAGE}")
        try:
            config = SimulationConfig(
                depth=options["depth"],
                sample_size=size,
                sample_fraction=fraction,
                seed=options["seed"],
                extraction=ExtractionOptions(
                    nuggets_per_doc=options["nuggets_per_doc"],
                    max_terms=options["max_terms"],
                    min_terms=options["min_terms"],
                    keywords=options["keywords"],
                ),
                rule=options["rule"],
                inference=options["inference"],
                nuggets=options["nuggets"],
                nugget_bank=options["bank"],
                k=options["k"],
                lam=options["lam"],
                relevance_level=options["relevance_level"],
                semantic=options["semantic"],
                assessor=options["assessor"],
                replace=options["replace"],
                ablate=options["ablate"],
                nugget_choice=not options["keep_nuggets"],
                judge_labels=tuple(options["judge_labels"]),
                judge_tables=tuple(options["judge_table"]),
            )
            runs = self._runs(collection, options["runs"])
            if options["reusability"] or options["groups"]:
                self._reusability(collection, runs, config, options)
                return
            common = {
                "collection": collection,
                "qrels_path": options["qrels"],
                "runs": runs,
                "config": config,
                "progress": lambda message: self.stderr.write(message),
            }
            data: SimulationData
            if options["rounds"] > 1:
                data = rounds_run(
                    rounds=options["rounds"], design=options["round_design"], **common
                )
            else:
                data = simulation_run(**common)
        except DomainError as error:
            raise CommandError(str(error)) from error
        report = report_build(data)
        if isinstance(data, RoundsData):
            report["rounds"] = data.rounds
        summary = {key: report[key] for key in SUMMARY_KEYS}
        summary["tau"] = report["tau"]
        undefined = {
            key: UNDEFINED.get(key, "a quotient with nothing to divide by on this data")
            for key in SUMMARY_KEYS
            if isinstance(summary[key], float) and not math.isfinite(summary[key])
        }
        if undefined:
            summary["null_because"] = undefined
        self.stdout.write(json.dumps(json_safe(summary), indent=1))
        if options["out"]:
            for path in report_write(report, Path(options["out"])):
                self.stderr.write(f"wrote {path}")

    def _reusability(self, collection, runs, config, options) -> None:
        if options["reusability"] != "leave-one-group-out" and options["groups"]:
            raise CommandError("--groups needs --reusability leave-one-group-out")
        if options["top_up"] < 0:
            raise CommandError(f"--top-up must be >= 0, got {options['top_up']}")
        groups = None
        if options["groups"]:
            path = options["groups"]
            try:
                with open(path, encoding="utf-8") as fh:
                    groups = groups_parse(fh, source=path)
            except OSError as error:
                raise CommandError(f"{path}: {error.strerror}") from None
        report = reusability_run(
            collection=collection,
            qrels_path=options["qrels"],
            runs=runs,
            config=config,
            mode=options["reusability"],
            groups=groups,
            top_up=options["top_up"],
            progress=lambda message: self.stderr.write(message),
        )
        report = {
            "collection": collection.name,
            "config": config_dict(config),
            **report,
        }
        self.stdout.write(json.dumps(json_safe(report["reusability"]), indent=1))
        if options["out"]:
            out = Path(options["out"])
            out.mkdir(parents=True, exist_ok=True)
            path = out / "report.json"
            path.write_text(json.dumps(json_safe(report), indent=1, sort_keys=True))
            self.stderr.write(f"wrote {path}")

    def _runs(self, collection: Collection, directory: str | None) -> list[Run]:
        if directory is None:
            return list(Run.objects.filter(collection=collection))
        paths = sorted(
            p for p in Path(directory).iterdir() if p.is_file() and ".run" in p.name
        )
        if not paths:
            raise CommandError(f"no *.run files in {directory}")
        # A file imported before (same path) is not imported again: re-importing
        # replaces every entry, which is slow and changes nothing.
        known = dict(
            Run.objects.filter(collection=collection).values_list("source_file", "name")
        )
        fresh = [p for p in paths if str(p) not in known]
        names = [known[str(p)] for p in paths if str(p) in known]
        if fresh:
            names += [s.name for s in runs_import(paths=fresh, collection=collection)]
        return list(Run.objects.filter(collection=collection, name__in=names))
