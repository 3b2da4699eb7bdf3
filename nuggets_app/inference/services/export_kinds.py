"""One dispatcher for every export kind, used by ``manage.py export_qrels``, the job
page's downloads and any later caller (a release bundle): :func:`export_make`.

Every export it returns carries its provenance: the kind's own sidecar (per line who
decided it, the model, the rule) under a header every kind shares, naming the kind,
collection, job, sample, rule, relevance level and counts
(:func:`provenance_header`). The file name of a download is :func:`export_filename`;
its sidecar is that name plus ``.provenance.json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.diversity import subtopics_export
from nuggets_app.inference.services.exports import (
    QRELS_KINDS,
    Export,
    ExportError,
    passages_export,
    prels_export,
    probabilistic_export,
    qrels_export,
    scores_export,
)
from nuggets_app.inference.services.graded import GRADED_SOURCES, graded_export
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.ir.aggregation import Aggregation
from nuggets_app.learning.rule_spec import threshold_check
from nuggets_app.models import Collection, JobInference, MatchJob, Sample, Topic

# Every kind, in the order commands and pages list them.
EXPORT_KINDS = (
    *QRELS_KINDS,
    "graded",
    "subtopics",
    "probabilistic",
    "scores",
    "prels",
    "passages",
)
# The kinds whose lines a decision rule decides (the others ignore a rule).
RULE_KINDS = ("inferred", "merged")
# The kinds that need a finished job.
JOB_KINDS = ("inferred", "merged", "graded", "probabilistic", "scores")


@dataclass(frozen=True)
class ExportRequest:
    """One export asked for, passed whole from the command, the job page or a
    release to the export of its kind.

    ``kind``: one of :data:`EXPORT_KINDS`; ``job``: the matching job (inferred,
    merged, graded, probabilistic and scores need one; subtopics and passages take one
    to restrict or infer); ``rule``: the decision rule of inferred and merged qrels
    (default: the job's default rule); ``sample``: the sample of prels (default: the
    job's sample); ``topics``: a subset of topics; ``later``: inferred, merged and
    probabilistic also decide the documents scored for the job after it ran;
    ``graded_from``, ``nugget_threshold`` and ``strong``: graded and subtopic qrels
    from the nuggets a document matches; ``aggregation``: how several assessors'
    grades become the human grade of human, inferred and merged qrels (the
    collection's rule when None)."""

    kind: str
    collection: Collection
    job: MatchJob | None = None
    rule: DecisionRule | None = None
    sample: Sample | None = None
    topics: Iterable[Topic] | None = None
    later: bool = False
    graded_from: str = "model"
    nugget_threshold: float = 0.5
    strong: float = 0.8
    aggregation: Aggregation | None = None

    def __post_init__(self) -> None:
        # A queryset or list of topics becomes a tuple: the value does not change.
        if self.topics is not None and not isinstance(self.topics, tuple):
            object.__setattr__(self, "topics", tuple(self.topics))


def export_make(request: ExportRequest) -> Export:
    """The export ``request`` asks for (:class:`ExportRequest`), with its provenance.
    ExportError (or a ValueError naming the bad value) when it cannot be made."""
    kind, collection, job = request.kind, request.collection, request.job
    if kind not in EXPORT_KINDS:
        raise ExportError(
            f"export kind must be one of {', '.join(EXPORT_KINDS)}, got {kind!r}"
        )
    if job is not None and job.collection_id != collection.pk:
        raise ExportError(f"job {job.pk} is not a job of {collection.name}")
    if kind in JOB_KINDS and job is None:
        raise ExportError(
            f"{kind} exports come from a matching job: name one", field="job"
        )
    if kind in RULE_KINDS and request.rule is None and job is not None:
        request = replace(request, rule=rule_default(job))
    if kind == "prels" and request.sample is None:
        request = replace(request, sample=_job_sample(job))
    threshold_check("threshold", request.nugget_threshold)
    export = _dispatch(request)
    header = provenance_header(
        kind=kind,
        collection=collection,
        job=job if kind != "human" else None,
        rule=request.rule if kind in RULE_KINDS else None,
        sample=request.sample,
        export=export,
    )
    own = export.provenance or {}
    export.provenance = {
        **header,
        **own,
        "counts": {**header["counts"], **own.get("counts", {})},
    }
    return export


def _dispatch(request: ExportRequest) -> Export:
    kind, collection, job = request.kind, request.collection, request.job
    topics = None if request.topics is None else list(request.topics)
    if kind in QRELS_KINDS:
        return qrels_export(
            collection=collection,
            kind=kind,
            job=job,
            rule=request.rule,
            topics=topics,
            later=request.later,
            aggregation=request.aggregation,
        )
    if kind == "passages":
        return passages_export(
            collection=collection,
            topics=topics if topics is not None else _job_topics(job),
        )
    if kind == "prels":
        assert request.sample is not None  # found by export_make
        return prels_export(sample=request.sample)
    if kind == "subtopics":
        return subtopics_export(
            collection=collection,
            job=job,
            threshold=request.nugget_threshold,
            topics=topics,
        )
    assert job is not None  # JOB_KINDS, checked by export_make
    if kind == "scores":
        return scores_export(job=job)
    if kind == "graded":
        if request.graded_from not in GRADED_SOURCES:
            raise ExportError(
                f"graded qrels come from {' or '.join(GRADED_SOURCES)}, "
                f"got {request.graded_from!r}"
            )
        return graded_export(
            job=job,
            source=request.graded_from,
            topics=topics,
            threshold=request.nugget_threshold,
            strong=request.strong,
        )
    return probabilistic_export(job=job, topics=topics, later=request.later)


def _job_topics(job: MatchJob | None) -> list[Topic] | None:
    return None if job is None else list(job.topics.all())


def _job_sample(job: MatchJob | None) -> Sample:
    """The sample a job ran over: prels without a sample named."""
    if job is None:
        raise ExportError(
            "prels come from a sample: name one (or a job over a sample)",
            field="sample",
        )
    if job.source != MatchJob.Source.SAMPLE or job.sample is None:
        raise ExportError(
            f"prels come from a sample: job {job.pk} ran over "
            f"{job.get_source_display().lower()}, not a sample; name a sample",
            field="sample",
        )
    return job.sample


def provenance_header(
    *,
    kind: str,
    collection: Collection,
    job: MatchJob | None,
    rule: DecisionRule | None,
    sample: Sample | None,
    export: Export,
) -> dict[str, Any]:
    """What every export says about itself, whatever its kind: kind, collection,
    job, sample, rule, relevance level and counts of lines and topics. A kind's own
    sidecar keys, where it has them, are more detailed and take precedence."""
    level = job.relevance_level if job is not None else collection.relevance_level
    qids = {line.split()[0] for line in export.lines}
    return {
        "kind": kind,
        "collection": collection.name,
        "job": job.pk if job is not None else None,
        "sample": _sample_name(job, sample),
        "rule": rule.as_dict() if rule is not None else None,
        "rule_text": rule.describe() if rule is not None else None,
        "relevance_level": level,
        "relevance": f"relevant at grade >= {level}",
        "counts": {"lines": len(export.lines), "topics": len(qids)},
        "topics": sorted(qids, key=qid_key),
    }


def _sample_name(job: MatchJob | None, sample: Sample | None) -> str | None:
    """The sample behind the lines: the one exported, else the job's, else the one
    the job's model was fitted on."""
    if sample is not None:
        return sample.name
    if job is None:
        return None
    if job.sample_id is not None and job.sample is not None:
        return job.sample.name
    info = JobInference.objects.filter(job=job).select_related("fit_sample").first()
    return info.fit_sample.name if info and info.fit_sample else None


def export_filename(*, kind: str, job: MatchJob | None = None) -> str:
    """The download's file name: ``job-3-inferred.qrels``, ``job-3.prob.qrels``, ...;
    its sidecar is this name plus ``.provenance.json``."""
    stem = f"job-{job.pk}" if job is not None else "export"
    if kind in (*QRELS_KINDS, "graded", "subtopics"):
        return f"{stem}-{kind}.qrels"
    if kind == "probabilistic":
        return f"{stem}.prob.qrels"
    return f"{stem}.{kind}"
