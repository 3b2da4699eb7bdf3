"""What a decision rule decides: {topic: {document: inferred relevant?}} of a job's
results (:func:`rule_apply`), and of the documents scored after the job ran
(:func:`rule_apply_later`). Rules on the model's probabilities read them from
:mod:`job_model <nuggets_app.inference.services.job_model>`; rules on the score read
the min-span scores of the job's results."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.inference.services.readiness import (
    job_has_model,
    model_missing_reason,
    rule_on_model,
)
from nuggets_app.inference.services.unpooled import later_columns
from nuggets_app.learning.rule_spec import RuleError
from nuggets_app.models import MatchJob, MatchResult, Topic


def rule_apply(
    *, job: MatchJob, rule: DecisionRule, topics: Iterable[Topic] | None = None
) -> dict[int, dict[int, bool]]:
    """{topic id: {document id: inferred relevant?}} for every result of the job."""
    wanted = None if topics is None else {t.pk for t in topics}
    qids = dict(Topic.objects.filter(match_jobs=job).values_list("pk", "qid"))
    # Only the topics asked for are read: a topic page does not load the whole job.
    if rule_on_model(job, rule):
        columns = job_probabilities(job=job, override=False, topics=wanted)
        if not columns and not job_has_model(job):
            raise RuleError(f"rule {rule.describe()!r}: {model_missing_reason(job)}")
    else:
        columns = _score_columns(job, wanted)
    out: dict[int, dict[int, bool]] = {}
    for topic_id, (docs, values) in columns.items():
        if wanted is not None and topic_id not in wanted:
            continue
        keep = _rule_mask(rule, qids.get(topic_id, ""), docs, values)
        out[topic_id] = dict(zip(docs.tolist(), keep.tolist(), strict=True))
    return out


def rule_apply_later(
    *, job: MatchJob, rule: DecisionRule, topics: Iterable[int]
) -> dict[int, dict[int, tuple[bool, float]]]:
    """{topic id: {document id: (inferred relevant?, value)}} for the documents scored
    after the job ran (:func:`nuggets_app.inference.services.unpooled.later_columns`),
    on the same value as :func:`rule_apply` (p or min-span score). No pooled decision
    changes: a threshold rule applies its threshold; a rule that picks per topic
    (expected F1, top n) applies the smallest value it kept in the topic's pool."""
    wanted = list(topics)
    on_model = rule_on_model(job, rule)
    later = later_columns(job=job, on_model=on_model, topics=wanted)
    if not later:
        return {}
    qids = dict(Topic.objects.filter(pk__in=list(later)).values_list("pk", "qid"))
    pooled: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if rule.kind not in ("threshold", "probability"):
        columns = (
            job_probabilities(job=job, override=False, topics=later)
            if on_model
            else _score_columns(job, set(later))
        )
        pooled = {t: columns[t] for t in later if t in columns}
    out: dict[int, dict[int, tuple[bool, float]]] = {}
    for topic_id, (docs, values) in later.items():
        qid = qids[topic_id]
        if rule.kind in ("threshold", "probability"):
            cut = _cut(rule, qid)
        else:
            pool_docs, pool_values = pooled.get(topic_id, (np.zeros(0), np.zeros(0)))
            kept = pool_values[_rule_mask(rule, qid, pool_docs, pool_values)]
            cut = float(kept.min()) if kept.size else math.inf
        out[topic_id] = {
            doc: (bool(value >= cut), value)
            for doc, value in zip(docs.tolist(), values.tolist(), strict=True)
        }
    return out


def _score_columns(
    job: MatchJob, topics: set[int] | None = None
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{topic id: (document ids, min-span scores)} of the job's results (of
    ``topics`` only, when given)."""
    results = MatchResult.objects.filter(job=job)
    if topics is not None:
        results = results.filter(topic_id__in=sorted(topics))
    rows = np.array(
        list(results.values_list("topic_id", "document_id", "score")), dtype=float
    )
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if rows.size == 0:
        return out
    order = np.argsort(rows[:, 0], kind="stable")
    rows = rows[order]
    topic_ids, starts = np.unique(rows[:, 0], return_index=True)
    bounds = [*starts.tolist(), len(rows)]
    for i, topic_id in enumerate(topic_ids.astype(int).tolist()):
        part = rows[bounds[i] : bounds[i + 1]]
        out[topic_id] = (part[:, 1].astype(np.int64), part[:, 2])
    return out


def _cut(rule: DecisionRule, qid: str) -> float:
    """A threshold rule's threshold for topic ``qid`` (infinite: nothing inferred)."""
    if rule.per_topic_only and qid not in rule.per_topic:
        return math.inf
    return rule.per_topic.get(qid, rule.threshold)


def _rule_mask(rule: DecisionRule, qid: str, docs: np.ndarray, values: np.ndarray):
    if rule.kind in ("threshold", "probability"):
        return values >= _cut(rule, qid)
    if rule.kind == "expected_f1":
        from nuggets_app.learning.thresholds import expected_f1_threshold

        return values >= expected_f1_threshold(values.tolist()).threshold
    order = np.lexsort((docs, -values))
    keep = np.zeros(len(docs), dtype=bool)
    chosen = order[: rule.n]
    keep[chosen] = values[chosen] > 0
    return keep
