"""``manage.py export_qrels``: every export kind through the one dispatcher
(:func:`nuggets_app.inference.services.export_kinds.export_make`), the rule through
the one rule path (:func:`nuggets_app.inference.services.rule_grammar.rule_from_options`)."""

from __future__ import annotations

import math
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.topics import UnknownTopics, topics_find
from nuggets_app.errors import DomainError
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.export_kinds import (
    EXPORT_KINDS,
    RULE_KINDS,
    ExportRequest,
    export_make,
)
from nuggets_app.inference.services.exports import QRELS_CONTENTS
from nuggets_app.inference.services.graded import GRADED_SOURCES
from nuggets_app.inference.services.rule_estimates import rule_estimate
from nuggets_app.ir.aggregation import RULES, TIES, Aggregation, AggregationError
from nuggets_app.learning.rule_spec import SPEC_FIT, threshold_check
from nuggets_app.management.commands._base import (
    add_rule_arguments,
    only_one,
    rule_of_options,
)
from nuggets_app.management.flags import command_error
from nuggets_app.models import Collection, MatchJob, Sample


def read_thresholds(path: Path) -> dict[str, float]:
    """``qid threshold`` per line (blank lines and ``#`` comments skipped)."""
    out: dict[str, float] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})") from exc
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise CommandError(
                f"{path}:{number}: expected 'qid threshold', got {line!r}"
            )
        try:
            value = float(parts[1])
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise CommandError(
                f"{path}:{number}: threshold {parts[1]!r} is not a number"
            )
        try:
            threshold_check("threshold", value)
        except DomainError as exc:
            raise CommandError(f"{path}:{number}: {exc}") from None
        if parts[0] in out:
            raise CommandError(f"{path}:{number}: topic {parts[0]} given twice")
        out[parts[0]] = value
    return out


class Command(BaseCommand):
    help = (
        "Export TREC qrels (human, inferred, merged, graded, subtopics), "
        "probabilistic qrels of a job's relevance model, a job's scores, a sample's "
        "prels, or passage qrels from nugget offsets; with -o, each file gets a "
        ".provenance.json sidecar naming its kind, rule, level, job, sample and "
        "counts."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument(
            "--kind",
            choices=EXPORT_KINDS,
            default="human",
            help="; ".join(f"{k}: {t}" for k, t in QRELS_CONTENTS.items()),
        )
        parser.add_argument(
            "--job", type=int, help="matching job (inferred, merged, scores)"
        )
        add_rule_arguments(
            parser, rule="(default for a job with a fitted model: p:0.5)"
        )
        parser.add_argument(
            "--thresholds", type=Path, help="per-topic thresholds file: 'qid threshold'"
        )
        parser.add_argument(
            "--graded-from",
            choices=GRADED_SOURCES,
            default="model",
            help="--kind graded: grades from the ordinal model (median grade) or from "
            "the nuggets a document matches (--threshold, default 0.5, and --strong)",
        )
        parser.add_argument(
            "--strong",
            type=float,
            default=0.8,
            help="--kind graded --graded-from nuggets: a match below this score "
            "counts one grade lower",
        )
        parser.add_argument(
            "--later",
            action="store_true",
            help="inferred, merged and probabilistic: also the documents scored for "
            "the job after it ran (added to the collection, or unpooled documents of "
            "new runs)",
        )
        parser.add_argument(
            "--aggregate",
            choices=RULES,
            help="human and merged qrels: how several assessors' grades become one "
            "(default: the collection's rule, itself 'highest' unless set)",
        )
        parser.add_argument(
            "--primary",
            metavar="USER",
            help="--aggregate primary (or --fallback primary): the primary assessor",
        )
        parser.add_argument(
            "--ties",
            choices=TIES,
            default="higher",
            help="--aggregate majority: a tie goes to the higher or the lower grade",
        )
        parser.add_argument(
            "--fallback",
            choices=RULES[:3],
            default="highest",
            help="--aggregate adjudicated or primary: the rule where nobody "
            "adjudicated or the primary did not judge",
        )
        parser.add_argument("--sample", help="sample name (prels)")
        parser.add_argument("--topics", nargs="+", metavar="QID", help="default: all")
        parser.add_argument("--output", "-o", type=Path, help="file (default: stdout)")

    def handle(self, *args, **options) -> None:
        collection = Collection.objects.filter(name=options["collection"]).first()
        if collection is None:
            raise CommandError(f"unknown collection {options['collection']}")
        topics = None
        if options["topics"]:
            try:
                topics = topics_find(collection=collection, qids=options["topics"])
            except UnknownTopics as exc:
                raise CommandError(str(exc)) from exc
        kind = options["kind"]
        job = self._job(options, collection)
        rule = self._rule(options, job) if kind in RULE_KINDS else None
        try:
            nugget_threshold = threshold_check(
                "threshold",
                0.5 if options["threshold"] is None else options["threshold"],
            )
            threshold_check("threshold", options["strong"])
            export = export_make(
                ExportRequest(
                    kind=kind,
                    collection=collection,
                    job=job,
                    rule=rule,
                    sample=self._sample(options, collection),
                    topics=topics,
                    later=options["later"],
                    graded_from=options["graded_from"],
                    nugget_threshold=nugget_threshold,
                    strong=options["strong"],
                    aggregation=_aggregation(options),
                )
            )
        except DomainError as exc:
            raise command_error(exc) from exc
        for warning in (export.provenance or {}).get("warnings") or []:
            self.stderr.write(f"warning: {warning}")
        if options["output"]:
            for path in export.write(options["output"]):
                self.stderr.write(f"wrote {path}")
        else:
            self.stdout.write(export.text(), ending="")

    def _job(self, options, collection: Collection) -> MatchJob | None:
        if options["job"] is None:
            return None
        job = MatchJob.objects.filter(pk=options["job"], collection=collection).first()
        if job is None:
            raise CommandError(f"no job {options['job']} in {collection.name}")
        return job

    def _sample(self, options, collection: Collection) -> Sample | None:
        name = options["sample"]
        if not name:
            return None
        return only_one(
            Sample.objects.filter(pool__collection=collection, name=name),
            unknown=f"unknown sample {name} in collection {collection.name}",
            several=(
                f"several samples named {name} in collection {collection.name}; "
                "rename one"
            ),
        )

    def _rule(self, options, job: MatchJob | None) -> DecisionRule:
        """The rule of the options, through the one rule path; a fitted one is
        reported with its precision and recall on the judged documents."""
        if options["thresholds"] and (options["fit"] or options["rule"]):
            given = "--fit" if options["fit"] else "--rule"
            raise CommandError(f"--thresholds and {given} exclude each other")
        per_topic = (
            read_thresholds(options["thresholds"]) if options["thresholds"] else None
        )
        chosen = any(
            options[k] is not None for k in ("rule", "fit", "top_n", "threshold")
        )
        if job is None and not chosen and not per_topic:
            raise CommandError(
                "inferred qrels need --job and a rule (--rule, --threshold, "
                "--thresholds or --top-n)"
            )
        rule = rule_of_options(options, job, per_topic=per_topic)
        fitted = options["fit"] or (options["rule"] or "").startswith(f"{SPEC_FIT}:")
        if fitted and job is not None:
            overall = rule_estimate(job=job, rule=rule)["all"]
            self.stderr.write(
                f"fitted rule: {rule.describe()}; on the judged documents precision "
                f"{_ratio(overall.precision)}, recall {_ratio(overall.recall)} "
                f"({overall.judged} judged)"
            )
        return rule


def _aggregation(options) -> Aggregation | None:
    """The export's ``--aggregate`` rule, or None (the collection's)."""
    if options["aggregate"] is None:
        if options["primary"]:
            raise CommandError("--primary needs --aggregate")
        return None
    try:
        aggregation = Aggregation(
            rule=options["aggregate"],
            primary=options["primary"],
            ties=options["ties"],
            fallback=options["fallback"],
        )
    except AggregationError as exc:
        raise CommandError(f"--aggregate: {exc}") from exc
    if (
        aggregation.primary
        and not get_user_model().objects.filter(username=aggregation.primary).exists()
    ):
        raise CommandError(f"--primary: no user {aggregation.primary!r}")
    return aggregation


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"
