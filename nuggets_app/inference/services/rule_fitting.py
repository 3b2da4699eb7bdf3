"""Fitting a decision rule: the threshold with the best F-beta on a job's held-out
judged documents. Held-out scores of a nugget's own document are re-computed from the
packed evidence (:mod:`nuggets_app.inference.services.evidence`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

from nuggets_app.inference.selectors import job_nuggets
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.evidence import evidence_scores_without
from nuggets_app.judging.selectors import human_grades
from nuggets_app.learning.thresholds import FitError, rule_fit_thresholds
from nuggets_app.models import MatchChunk, MatchJob, MatchResult, Topic


def rule_fit(
    *,
    job: MatchJob,
    objective: str = "f1",
    scope: str = "global",
    beta: float = 1.0,
    min_relevant: int = 2,
    sources: str = "leave-out",
    assessors: Iterable[int] | None = None,
    relevance_level: int | None = None,
) -> DecisionRule:
    """The threshold rule with the best F-beta on the job's held-out judged documents.

    ``objective`` is ``"f1"`` (beta = 1) or ``"fbeta"`` (uses ``beta``). Judged =
    Judgment rows (of ``assessors`` only, when given; the human label, as
    :func:`human_grades`) for the job's results; relevant when the grade is >=
    ``relevance_level`` (default: the collection's). A nugget's own document matches
    it almost perfectly, so a judged document that is the source of some of the
    topic's nuggets is held out: ``sources="leave-out"`` (default) scores it against
    the topic's *other* nuggets (from the packed evidence, exactly as the matcher
    would), ``"exclude"`` leaves it out of the fit. ``scope`` and ``min_relevant`` as
    in :func:`nuggets_app.learning.thresholds.rule_fit_thresholds`. Raises ``FitError`` (a
    ``ValueError``) when nothing can be fitted.
    """
    if objective not in ("f1", "fbeta"):
        raise FitError(f"objective must be f1 or fbeta, got {objective!r}")
    if objective == "f1" and beta != 1.0:
        raise FitError(f"objective f1 means beta = 1, got beta {beta}")
    if sources not in ("leave-out", "exclude"):
        raise FitError(f"sources must be leave-out or exclude, got {sources!r}")
    if relevance_level is None:
        relevance_level = job.relevance_level
    judged = _held_out(job, assessors, relevance_level, sources == "leave-out")
    fit = rule_fit_thresholds(judged, beta=beta, scope=scope, min_relevant=min_relevant)
    return DecisionRule(
        kind="threshold", threshold=fit.overall.threshold, per_topic=fit.thresholds()
    )


def _held_out(
    job: MatchJob, assessors: Iterable[int] | None, level: int, leave_out: bool
) -> dict[str, list[tuple[float, bool]]]:
    """{qid: [(score, relevant?)]} of the judged results, nugget sources held out."""
    # Imported here: the matching package imports this module for evidence packing.
    topics = dict(Topic.objects.filter(match_jobs=job).values_list("pk", "qid"))
    grades = human_grades(topics, assessors)
    own: dict[tuple[int, int], set[int]] = {}
    for topic_id in topics:
        for nugget_id, doc_id in job_nuggets(job, topic_id).values_list(
            "pk", "document_id"
        ):
            own.setdefault((topic_id, doc_id), set()).add(nugget_id)
    rescored = _source_scores(job, own, grades) if leave_out else {}
    held_out: dict[str, list[tuple[float, bool]]] = {qid: [] for qid in topics.values()}
    rows = MatchResult.objects.filter(job=job).values_list(
        "topic_id", "document_id", "score"
    )
    for topic_id, doc_id, score in rows.iterator(chunk_size=5000):
        key = (topic_id, doc_id)
        grade = grades.get(key)
        if grade is None or (key in own and key not in rescored):
            continue
        held_out[topics[topic_id]].append((rescored.get(key, score), grade >= level))
    return held_out


def _source_scores(
    job: MatchJob,
    own: dict[tuple[int, int], set[int]],
    grades: dict[tuple[int, int], int],
) -> dict[tuple[int, int], float]:
    """{(topic id, document id): score without its own nuggets} of judged sources."""
    wanted = {key for key in own if key in grades}
    out: dict[tuple[int, int], float] = {}
    by_topic: dict[int, dict[int, set[int]]] = {}
    for topic_id, doc_id in wanted:
        by_topic.setdefault(topic_id, {})[doc_id] = own[(topic_id, doc_id)]
    chunks = MatchChunk.objects.filter(
        job=job, topic_id__in=list(by_topic), packed_evidence__isnull=False
    ).values_list("topic_id", "packed_evidence")
    for topic_id, blob in chunks.iterator(chunk_size=100):
        excluded = by_topic[topic_id]
        for doc_id, score in evidence_scores_without(
            bytes(cast(bytes, blob)), job.lam, excluded
        ).items():
            out[(topic_id, doc_id)] = score
    return out
