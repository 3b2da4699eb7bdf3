"""Readiness: which of a job's topics a decision rule can decide, and why not.

A rule on the min-span score needs the topic's nuggets; a rule on the model's
probabilities needs a judged document in the topic (the model learns from them) and a
fitted model. Judged = ``Judgment`` rows with a grade for the topic and document (the
human label of :func:`nuggets_app.judging.selectors.human_grades`). The warnings the
job page and ``match`` print come from the same facts (:func:`launch_warnings`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.selectors import nuggets_kept
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    JobInference,
    JobTopicProbabilities,
    MatchJob,
    Nugget,
    Topic,
)


def job_has_model(job: MatchJob) -> bool:
    """Whether the job has fitted probabilities of relevance."""
    return JobTopicProbabilities.objects.filter(job=job).exists()


def rule_default(job: MatchJob) -> DecisionRule:
    """The one default rule of a job, for its page, the evaluate page and every
    export: p >= 0.5 for a job with a fitted model, else the paper rule at 0.5."""
    if job_has_model(job):
        return DecisionRule(kind="probability", threshold=0.5)
    return DecisionRule(kind="threshold", threshold=0.5)


def _by_qid(topics: Iterable[Topic]) -> list[Topic]:
    return sorted(topics, key=lambda t: qid_key(t.qid))


def _job_topics(job: MatchJob, topic_ids: Iterable[int] | None) -> list[Topic]:
    """The job's topics (of ``topic_ids`` only, when given), by qid."""
    topics = Topic.objects.filter(match_jobs=job)
    if topic_ids is not None:
        topics = topics.filter(pk__in=list(topic_ids))
    return _by_qid(topics)


def topics_without_nuggets(
    job: MatchJob, *, topic_ids: Iterable[int] | None = None
) -> list[Topic]:
    """The job's topics (of ``topic_ids`` only, when given) that have no nugget under
    its nugget filter, by qid. One query for the nuggets, however many topics."""
    topics = _job_topics(job, topic_ids)
    nuggets = Nugget.objects.filter(topic_id__in=[t.pk for t in topics])
    kept = set(nuggets_kept(nuggets, job).order_by().values_list("topic_id", flat=True))
    return [t for t in topics if t.pk not in kept]


def topics_unjudged(
    job: MatchJob,
    *,
    topic_ids: Iterable[int] | None = None,
    labels: Mapping[tuple[int, int], object] | None = None,
) -> list[Topic]:
    """The job's topics (of ``topic_ids`` only, when given) without any judged
    document (or, for a fitted job, left out of its fit): nothing was sampled there,
    so the relevance model has nothing to learn from and rules on its p decide nothing
    for them. ``labels``: the people's labels of these topics under the collection's
    aggregation rule, keyed by (topic id, document id), when the caller has read them
    already (read here when None)."""
    topics = _job_topics(job, topic_ids)
    if labels is None:
        labels = human_grades([t.pk for t in topics])
    judged = {t for t, _ in labels}
    fitted = JobInference.objects.filter(job=job, model__isnull=False).first()
    left_out = set(fitted.fit_info.get("unjudged_topics", [])) if fitted else set()
    return [t for t in topics if t.pk not in judged or t.qid in left_out]


UNJUDGED_REASON = "no judged document"
NO_NUGGETS_REASON = "no nuggets (the paper rule cannot decide them)"
# A topic with nuggets but no judged document, under a rule on the model's p.
MODEL_UNJUDGED_REASON = (
    "no judged document (rules on the model's p cannot decide it; the paper rule "
    "decides it from its nuggets)"
)


def rule_on_model(job: MatchJob, rule: DecisionRule) -> bool:
    """Whether the rule ranks by the model's p (else by the min-span score)."""
    return rule.uses_model or (rule.kind == "top_n" and job_has_model(job))


def rule_undecided_reasons(
    job: MatchJob,
    rule: DecisionRule,
    *,
    topic_ids: Iterable[int] | None = None,
    labels: Mapping[tuple[int, int], object] | None = None,
) -> dict[str, str]:
    """{qid: why} of the job's topics (of ``topic_ids`` only, when given) the rule
    cannot decide. A rule on the model's p needs a judged document in the topic (the
    model learns from them); a rule on the min-span score needs nuggets only (without
    them every score is 0, which says nothing), so it decides a topic of an imported
    nugget bank nobody judged. ``labels`` as in :func:`topics_unjudged`."""
    unjudged = topics_unjudged(job, topic_ids=topic_ids, labels=labels)
    if rule_on_model(job, rule):
        bare = (
            {t.pk for t in topics_without_nuggets(job, topic_ids=topic_ids)}
            if unjudged
            else set()
        )
        return {
            t.qid: UNJUDGED_REASON if t.pk in bare else MODEL_UNJUDGED_REASON
            for t in unjudged
        }
    unjudged_ids = {t.pk for t in unjudged}
    return {
        t.qid: UNJUDGED_REASON if t.pk in unjudged_ids else NO_NUGGETS_REASON
        for t in topics_without_nuggets(job, topic_ids=topic_ids)
    }


def rule_undecided(job: MatchJob, rule: DecisionRule) -> list[Topic]:
    """The topics of :func:`rule_undecided_reasons`, by qid."""
    reasons = rule_undecided_reasons(job, rule)
    return [
        t for t in _by_qid(Topic.objects.filter(match_jobs=job)) if t.qid in reasons
    ]


def model_missing_reason(job: MatchJob) -> str:
    """Why a job has no model's p: nothing judged to fit on, or not fitted yet."""
    if len(topics_unjudged(job)) == job.topics.count():
        return (
            f"job {job.pk} has no relevance model: no document of its topics is "
            "judged, so there is nothing to fit the model on (the paper rule decides "
            "topics from their nuggets)"
        )
    return f"job {job.pk} has no fitted probabilities (fit its relevance model first)"


def launch_warnings(job: MatchJob) -> list[str]:
    """What a researcher should know about a job's topics before trusting it; each
    sentence holds under every rule it names."""
    out = []
    bare = {t.qid for t in topics_without_nuggets(job)}
    unjudged = [t.qid for t in topics_unjudged(job)]
    nothing = [q for q in unjudged if q in bare]
    if nothing:
        out.append(
            f"topics {', '.join(nothing)} have no judged document and no nuggets: no "
            "rule infers anything for them (they stay out of inferred and merged "
            "qrels, and have no estimate) until some of their documents are judged "
            "or nuggets are added"
        )
    nuggets_only = [q for q in unjudged if q not in bare]
    if nuggets_only:
        out.append(
            f"topics {', '.join(nuggets_only)} have nuggets but no judged document: "
            "the paper rule (and top N by score) decides them from the min-span "
            "score; rules on the model's p cannot (there is nothing to fit the model "
            "on), so they stay out of those qrels and have no estimate"
        )
    missing = [q for q in sorted(bare, key=qid_key) if q not in unjudged]
    if missing:
        out.append(
            f"topics {', '.join(missing)} have no nuggets: the paper rule cannot "
            "decide them (their unjudged documents stay out of inferred and merged "
            "qrels under it); the relevance model gives them probabilities from the "
            "topic statement, relevance feedback and prevalence only"
        )
    return out


def undecided_warnings(reasons: dict[str, str]) -> list[str]:
    """One sentence per reason of :func:`rule_undecided_reasons`, naming its topics
    (an export's warnings)."""
    by_reason: dict[str, list[str]] = {}
    for qid in sorted(reasons, key=qid_key):
        by_reason.setdefault(reasons[qid], []).append(qid)
    return [
        f"topics {', '.join(qids)} have {why}: their unjudged documents are left "
        "out (only human judgments)"
        for why, qids in by_reason.items()
    ]
