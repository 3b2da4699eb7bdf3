"""``manage.py export_qrels``: qrels (human, inferred, merged, probabilistic), scores,
prels, passages."""

from __future__ import annotations

import math
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.collection.services.topics import UnknownTopics, topics_find
from nuggets_app.errors import DomainError
from nuggets_app.inference.services.diversity import subtopics_export
from nuggets_app.inference.services.exports import (
    QRELS_KINDS,
    passages_export,
    prels_export,
    probabilistic_export,
    qrels_export,
    scores_export,
)
from nuggets_app.inference.services.graded import GRADED_SOURCES, graded_export
from nuggets_app.inference.services.rules import (
    DecisionRule,
    rule_default,
    rule_estimate,
    rule_fit,
    rule_from_spec,
)
from nuggets_app.judging.aggregation import (
    RULES,
    TIES,
    Aggregation,
    AggregationError,
)
from nuggets_app.learning.thresholds import fit_spec_parse
from nuggets_app.management.commands._base import add_rule_arguments, only_one
from nuggets_app.models import Collection, MatchJob, Sample

KINDS = (
    *QRELS_KINDS,
    "graded",
    "subtopics",
    "probabilistic",
    "scores",
    "prels",
    "passages",
)


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
        if parts[0] in out:
            raise CommandError(f"{path}:{number}: topic {parts[0]} given twice")
        out[parts[0]] = value
    return out


class Command(BaseCommand):
    help = (
        "Export TREC qrels (human, inferred or merged, with a .provenance.json sidecar), "
        "probabilistic qrels of a job's relevance model, a job's scores, a sample's "
        "prels, or passage qrels from nugget offsets."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection name")
        parser.add_argument("--kind", choices=KINDS, default="human")
        parser.add_argument(
            "--job", type=int, help="matching job (inferred, merged, scores)"
        )
        rule = add_rule_arguments(
            parser, rule="(default for a job with a fitted model: p:0.5)"
        )
        rule.add_argument(
            "--fit",
            metavar="fB[:per-topic]",
            help="inferred relevant: score >= the threshold with the best F-beta on "
            "the job's held-out judged documents (e.g. f1, f1:per-topic, f0.5)",
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
        try:
            export = self._export(options, collection, topics)
        except DomainError as exc:
            raise CommandError(str(exc)) from exc
        if options["output"]:
            for path in export.write(options["output"]):
                self.stderr.write(f"wrote {path}")
        else:
            self.stdout.write(export.text(), ending="")

    def _export(self, options, collection: Collection, topics):
        kind = options["kind"]
        if kind == "passages":
            return passages_export(collection=collection, topics=topics)
        if kind == "prels":
            name = options["sample"]
            if not name:
                return prels_export(sample=self._job_sample(options, collection))
            sample = only_one(
                Sample.objects.filter(pool__collection=collection, name=name),
                unknown=f"unknown sample {name} in collection {collection.name}",
                several=(
                    f"several samples named {name} in collection {collection.name}; "
                    "rename one"
                ),
            )
            return prels_export(sample=sample)
        job = None
        if options["job"] is not None:
            job = MatchJob.objects.filter(
                pk=options["job"], collection=collection
            ).first()
            if job is None:
                raise CommandError(f"no job {options['job']} in {collection.name}")
        if kind == "scores":
            if job is None:
                raise CommandError("--kind scores needs --job")
            return scores_export(job=job)
        if kind == "subtopics":
            threshold = options["threshold"]
            return subtopics_export(
                collection=collection,
                job=job,
                threshold=0.5 if threshold is None else threshold,
                topics=topics,
            )
        if kind == "graded":
            if job is None:
                raise CommandError("--kind graded needs --job")
            threshold = options["threshold"]
            return graded_export(
                job=job,
                source=options["graded_from"],
                topics=topics,
                threshold=0.5 if threshold is None else threshold,
                strong=options["strong"],
            )
        if kind == "probabilistic":
            if job is None:
                raise CommandError("--kind probabilistic needs --job")
            return probabilistic_export(job=job, topics=topics, later=options["later"])
        rule = None
        if kind != "human":
            if options["fit"]:
                rule = self._fitted(options, job)
            elif options["rule"]:
                rule = rule_from_spec(options["rule"])
            else:
                rule = _rule(options, job)
        export = qrels_export(
            collection=collection,
            kind=kind,
            job=job,
            rule=rule,
            topics=topics,
            later=options["later"],
            aggregation=_aggregation(options),
        )
        for warning in (export.provenance or {}).get("warnings") or []:
            self.stderr.write(f"warning: {warning}")
        return export

    def _job_sample(self, options, collection: Collection) -> Sample:
        """The sample a ``--job`` ran over: prels without ``--sample``."""
        if options["job"] is None:
            raise CommandError(
                "--kind prels needs --sample NAME (or --job over a sample)"
            )
        job = MatchJob.objects.filter(pk=options["job"], collection=collection).first()
        if job is None:
            raise CommandError(f"no job {options['job']} in {collection.name}")
        if job.sample is None:
            raise CommandError(
                f"--kind prels needs a sample: job {job.pk} ran over "
                f"{job.get_source_display().lower()}, not a sample; give --sample NAME"
            )
        return job.sample

    def _fitted(self, options, job: MatchJob | None) -> DecisionRule:
        if job is None:
            raise CommandError("--fit needs --job")
        if options["thresholds"]:
            raise CommandError("--fit and --thresholds exclude each other")
        beta, scope = fit_spec_parse(options["fit"])
        rule = rule_fit(
            job=job,
            objective="f1" if beta == 1.0 else "fbeta",
            beta=beta,
            scope=scope,
        )
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


def _rule(options, job: MatchJob | None) -> DecisionRule:
    per_topic = read_thresholds(options["thresholds"]) if options["thresholds"] else {}
    if options["top_n"] is not None:
        return DecisionRule(kind="top_n", n=options["top_n"])
    if options["threshold"] is None and not per_topic:
        if job is not None:
            return rule_default(job)
        raise CommandError(
            "inferred qrels need --rule, --threshold, --thresholds or --top-n"
        )
    # A topic missing from the thresholds file infers nothing: scores never exceed 1.
    threshold = options["threshold"] if options["threshold"] is not None else 2.0
    return DecisionRule(kind="threshold", threshold=threshold, per_topic=per_topic)
