"""The figures of a job's topic page, computed once per input and kept.

Each reads every result of the topic (a million rows in a large collection): the
rule's decisions and estimate, the score histograms, the TP/FP curve, the model's p.
They (and the aspects the documents cover, read from every chunk's evidence) are
kept in the cache under the job's input versions
(:func:`nuggets_app.evaluation.selectors.job_inputs_version`) and the rule, so a page
computes them on its first request and reads them after; any change to the job, its
fit, judgments, nuggets, runs or samples gives a new key.
"""

from __future__ import annotations

import heapq
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from nuggets_app.errors import DomainError
from nuggets_app.evaluation import selectors as evaluation_selectors
from nuggets_app.inference import selectors as inference_selectors
from nuggets_app.inference.services import (
    decision_rule,
    diversity,
    readiness,
    rule_application,
    rule_estimates,
)
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import MatchJob, Topic
from nuggets_app.operations.services.computed import kept, kept_key

# The best inferred documents the page lists.
TOP = 25


@dataclass
class TopicFigures:
    """What the topic page shows of the rule and the model, without any row."""

    rule: decision_rule.DecisionRule
    error: str  # the rule could not be applied; the paper rule was used instead
    reason: str | None
    topic_unjudged: bool
    has_nuggets: bool
    estimate: rule_estimates.RuleEstimate
    histogram: dict[str, Any]
    curve: list[tuple[float, int, int]]
    groups: dict[str, int]
    inferred_count: int
    top: list[tuple[int, float | None]]  # (document id, model p) of the best inferred
    model: evaluation_selectors.TopicModelView = field(repr=False)
    aspects: diversity.TopicAspects = field(repr=False)


def job_topic_figures(
    *, job: MatchJob, topic: Topic, rule: decision_rule.DecisionRule
) -> TopicFigures:
    """The topic page's figures under ``rule``, kept per the job's inputs."""
    versions = evaluation_selectors.job_inputs_version(job)
    # The field names too: a kept value of an older shape is never read.
    shape = [f.name for f in fields(TopicFigures)]
    # The topic's own aspects too: they can be added while judging.
    subject = [topic.pk, topic.aspects]
    key = kept_key("job-topic", [shape, versions, subject, asdict(rule)])
    return kept(key, lambda: _figures(job, topic, rule))


def _figures(
    job: MatchJob, topic: Topic, rule: decision_rule.DecisionRule
) -> TopicFigures:
    error = ""
    try:
        decided = rule_application.rule_apply(job=job, rule=rule, topics=[topic])
    except DomainError as exc:
        error = str(exc)
        rule = decision_rule.DecisionRule()
        decided = rule_application.rule_apply(job=job, rule=rule, topics=[topic])
    reason = readiness.rule_undecided_reasons(job, rule).get(topic.qid)
    groups = inference_selectors.topic_scores(job, topic)
    model = evaluation_selectors.topic_model_view(job=job, topic=topic)
    grades = {d for (_, d) in human_grades([topic.pk])}
    inferred = (
        []
        if reason is not None
        else [d for d, keep in decided.get(topic.pk, {}).items() if keep]
    )
    inferred = [d for d in inferred if d not in grades]
    return TopicFigures(
        rule=rule,
        error=error,
        reason=reason,
        topic_unjudged=topic.pk in {t.pk for t in readiness.topics_unjudged(job)},
        has_nuggets=inference_selectors.job_nuggets(job, topic.pk).exists(),
        estimate=rule_estimates.rule_estimate(job=job, rule=rule, topics=[topic]).get(
            topic.qid, rule_estimates.RuleEstimate()
        ),
        histogram=inference_selectors.score_histograms(groups),
        curve=inference_selectors.tp_fp_curve(groups),
        groups={name: len(pairs) for name, pairs in groups.items()},
        inferred_count=len(inferred),
        top=_top(inferred, groups, model),
        # The page needs the model's figures, not its p of every document.
        model=replace(model, docs=None, p=None),
        aspects=diversity.topic_aspects(job=job, topic=topic),
    )


def _top(
    inferred: list[int], groups, model: evaluation_selectors.TopicModelView
) -> list[tuple[int, float | None]]:
    """The ``TOP`` best inferred documents: by the model's p, else the score (the
    page's order), then document id."""
    if not inferred:
        return []
    p_by_doc = model.p_of(inferred) if model.fitted else {}
    scores = dict(groups["unjudged"])

    def key(doc_id: int) -> tuple[float, int]:
        value = p_by_doc.get(doc_id)
        return (-(value if value is not None else scores.get(doc_id, 0.0)), doc_id)

    return [(d, p_by_doc.get(d)) for d in heapq.nsmallest(TOP, inferred, key=key)]
