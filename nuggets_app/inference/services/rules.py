"""Decision rules: which matched documents are inferred relevant, and how good a rule
looks on the human-judged sample.

Judged = ``Judgment`` rows with a grade for the topic and document; when several
assessors judged a document its human label is the collection's aggregation rule's
(:mod:`nuggets_app.judging.aggregation`; by default the highest grade: one assessor
finding it relevant makes it relevant); relevant means grade >=
``collection.relevant_threshold``.
Rules on the model's probabilities read them from :mod:`job_model
<nuggets_app.inference.services.job_model>`; held-out scores are re-computed from the
packed evidence (:mod:`nuggets_app.inference.services.evidence`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.selectors import job_nuggets
from nuggets_app.inference.services.evidence import evidence_scores_without
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.inference.services.unpooled import later_columns
from nuggets_app.judging.selectors import human_grades
from nuggets_app.learning.rule_spec import (
    RULE_SPECS,
    RuleError,
    rule_spec_parse,
    threshold_check,
    top_n_check,
)
from nuggets_app.learning.thresholds import FitError, rule_fit_thresholds
from nuggets_app.models import (
    JobInference,
    JobTopicProbabilities,
    MatchChunk,
    MatchJob,
    MatchResult,
    Topic,
)

# --- decision rules ---------------------------------------------------------------------
RULE_KINDS = ("threshold", "top_n", "probability", "expected_f1")
# Rules on the model's probability of relevance (the job needs a fitted model).
MODEL_RULES = ("probability", "expected_f1")


@dataclass(frozen=True)
class DecisionRule:
    """Which matched documents are inferred relevant.

    ``threshold`` (the paper rule): min-span score >= the topic's threshold
    (``per_topic`` by qid, else the global ``threshold``); ``top_n``: the ``n`` best
    documents of each topic (by the model's probability when the job has a fitted
    model, else by score, with a positive score; ties broken by document id);
    ``probability``: the model's p >= ``threshold`` (default 0.5); ``expected_f1``:
    p >= the topic's threshold that maximises the expected F1 under the model's
    probabilities.

    Rules on the score need nuggets: under ``threshold`` and score-ranked ``top_n`` a
    topic without nuggets cannot be decided (:func:`rule_undecided`); exports and
    verification leave its unjudged documents out, never a silent "all
    non-relevant". ``per_topic_only``: a topic missing from ``per_topic`` infers
    nothing (a thresholds file that names some topics only).

    Every value is checked here, whoever builds the rule (a command, a form, a
    download link, a fit): thresholds by :func:`threshold_check` (a probability in
    [0, 1], a min-span score within [0, 1]), N by :func:`top_n_check`; a bad one
    raises :class:`RuleError` with one sentence.
    """

    kind: str = "threshold"
    threshold: float = 0.5
    per_topic: dict[str, float] = field(default_factory=dict)
    n: int = 0
    per_topic_only: bool = False

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise RuleError(
                f"rule kind must be one of {', '.join(RULE_KINDS)}, got {self.kind!r}"
            )
        if self.kind == "top_n":
            top_n_check(self.n)
        threshold_check(self.kind, self.threshold)
        for qid, value in self.per_topic.items():
            try:
                threshold_check(self.kind, value)
            except RuleError as exc:
                raise RuleError(f"topic {qid}: {exc}") from None

    @property
    def uses_model(self) -> bool:
        """Whether the rule reads the model's probabilities (always for p rules)."""
        return self.kind in MODEL_RULES

    def as_dict(self) -> dict[str, Any]:
        """The rule as plain JSON (for provenance sidecars)."""
        if self.kind == "top_n":
            return {"kind": "top_n", "n": self.n}
        if self.kind == "expected_f1":
            return {"kind": "expected_f1"}
        if self.kind == "probability":
            return {"kind": "probability", "threshold": self.threshold}
        out: dict[str, Any] = {
            "kind": "threshold",
            "threshold": self.threshold,
            "per_topic": self.per_topic,
        }
        if self.per_topic_only:
            out["other_topics"] = "nothing inferred"
        return out

    def describe(self) -> str:
        """A short human label."""
        if self.kind == "top_n":
            return f"top {self.n} per topic"
        if self.kind == "probability":
            return f"p >= {self.threshold:g}"
        if self.kind == "expected_f1":
            return "p >= the threshold of best expected F1"
        if self.per_topic_only:
            return (
                f"paper rule: score >= the thresholds of {len(self.per_topic)} "
                "topics (nothing inferred for the others)"
            )
        extra = f", {len(self.per_topic)} per-topic" if self.per_topic else ""
        return f"paper rule: score >= {self.threshold:g}{extra}"


def rule_from_spec(text: str, *, job: MatchJob | None = None) -> DecisionRule:
    """A rule from its one spelling (:mod:`nuggets_app.learning.rule_spec`): ``p:X``,
    ``expected-f1``, ``top:N``, ``paper:X`` (``threshold:X`` too) and
    ``fit:fB[:per-topic]``, which is fitted on ``job``'s held-out judged documents
    (:func:`rule_fit`). RuleError (a ValueError) on a bad spelling or value."""
    spec = rule_spec_parse(text, default_threshold=DEFAULT_THRESHOLD)
    if spec.kind == "fit":
        if job is None:
            raise RuleError(f"rule {text.strip()!r}: a fitted rule needs a job")
        beta = spec.beta if spec.beta is not None else 1.0
        return rule_fit(
            job=job,
            objective="f1" if beta == 1.0 else "fbeta",
            beta=beta,
            scope=spec.scope,
        )
    if spec.kind == "top_n":
        return DecisionRule(kind="top_n", n=spec.n or 0)
    if spec.kind == "expected_f1":
        return DecisionRule(kind="expected_f1")
    return DecisionRule(
        kind=spec.kind,
        threshold=DEFAULT_THRESHOLD if spec.threshold is None else spec.threshold,
    )


# --- the rule's spellings: forms and command-line options ---------------------------
# Every form and command builds its rule fields from these, and its rule through
# rule_from_values (a form) / rule_from_options (a command), both over DecisionRule,
# which checks every value, so a rule reads and is refused the same everywhere.
DEFAULT_THRESHOLD = 0.5
DEFAULT_TOP_N = 100
# The form's choice that stands for each job's default rule (:func:`rule_default`).
DEFAULT_KIND = "default"
DEFAULT_CHOICE = (DEFAULT_KIND, "The job's default")
# What each choice does, in full (a form shows it beside the short label).
RULE_DESCRIPTIONS = {
    DEFAULT_KIND: "The job's default: p >= 0.5 with a fitted model, else the paper "
    "rule at 0.5.",
    "threshold": "The paper rule: the matcher's min-span score >= the threshold.",
    "probability": "The relevance model's probability p >= the threshold.",
    "expected_f1": "Per topic, p >= the threshold that maximises the expected F1 "
    "under the model's probabilities.",
    "top_n": "The N best documents of each topic (by p with a fitted model, else by "
    "score).",
}
# (kind, label) in the order a form lists them.
RULE_CHOICES = (
    ("threshold", "Paper rule: score >= threshold"),
    ("probability", "Model: p >= threshold"),
    ("expected_f1", "Model: best expected F1"),
    ("top_n", "Top N per topic"),
)
# The command-line options of a rule, mutually exclusive: (flag, argparse keywords).
RULE_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--threshold", {"type": float, "help": "inferred relevant: score >= X"}),
    ("--top-n", {"type": int, "help": "inferred relevant: N best per topic"}),
    ("--rule", {"metavar": "SPEC", "help": f"decision rule: {RULE_SPECS}"}),
    (
        "--fit",
        {
            "metavar": "fB[:per-topic]",
            "help": "the same as --rule fit:fB[:per-topic]: score >= the threshold "
            "with the best F-beta on the job's held-out judged documents (e.g. f1, "
            "f1:per-topic, f0.5)",
        },
    ),
)


def rule_from_values(
    kind: str, *, threshold: float | None = None, n: int | None = None
) -> DecisionRule:
    """A rule from a form's fields (threshold 0.5 and N 100 when left empty)."""
    if kind == "top_n":
        return DecisionRule(kind="top_n", n=DEFAULT_TOP_N if n is None else n)
    if kind == "expected_f1":
        return DecisionRule(kind="expected_f1")
    return DecisionRule(
        kind=kind, threshold=DEFAULT_THRESHOLD if threshold is None else threshold
    )


def rule_from_options(
    *,
    rule: str | None = None,
    top_n: int | None = None,
    threshold: float | None = None,
    fit: str | None = None,
    per_topic: dict[str, float] | None = None,
    job: MatchJob | None = None,
) -> DecisionRule:
    """The rule of the command-line options of :data:`RULE_OPTIONS`: ``--rule SPEC``,
    ``--fit fB`` (``--rule fit:fB``), ``--top-n N`` or ``--threshold T``, with a
    per-topic thresholds table beside ``--threshold`` (``per_topic``; without a
    threshold, topics missing from it infer nothing). With none of them, ``job``'s
    default rule (:func:`rule_default`), else the paper rule at 0.5."""
    if fit:
        if job is None:
            raise RuleError("--fit needs --job (the rule is fitted on its judgments)")
        rule = f"fit:{fit}"
    if per_topic and (rule or top_n is not None):
        given = "--fit" if fit else "--rule" if rule else "--top-n"
        raise RuleError(f"--thresholds and {given} exclude each other")
    if rule:
        return rule_from_spec(rule, job=job)
    if top_n is not None:
        return DecisionRule(kind="top_n", n=top_n)
    if per_topic:
        if threshold is None:
            return DecisionRule(
                kind="threshold",
                threshold=DEFAULT_THRESHOLD,
                per_topic=per_topic,
                per_topic_only=True,
            )
        return DecisionRule(kind="threshold", threshold=threshold, per_topic=per_topic)
    if threshold is not None:
        return DecisionRule(kind="threshold", threshold=threshold)
    return rule_default(job) if job is not None else DecisionRule()


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


def topics_without_nuggets(job: MatchJob) -> list[Topic]:
    """The job's topics that have no nugget under its nugget filter, by qid."""
    return [
        t
        for t in _by_qid(Topic.objects.filter(match_jobs=job))
        if not job_nuggets(job, t.pk).exists()
    ]


def topics_unjudged(job: MatchJob) -> list[Topic]:
    """The job's topics without any judged document (or, for a fitted job, left out
    of its fit): nothing was sampled there, so the relevance model has nothing to
    learn from and rules on its p decide nothing for them."""
    topics = _by_qid(Topic.objects.filter(match_jobs=job))
    judged = {t for t, _ in human_grades([t.pk for t in topics])}
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


def rule_undecided_reasons(job: MatchJob, rule: DecisionRule) -> dict[str, str]:
    """{qid: why} of the job's topics the rule cannot decide. A rule on the model's p
    needs a judged document in the topic (the model learns from them); a rule on the
    min-span score needs nuggets only (without them every score is 0, which says
    nothing), so it decides a topic of an imported nugget bank nobody judged."""
    unjudged = topics_unjudged(job)
    if rule_on_model(job, rule):
        bare = {t.pk for t in topics_without_nuggets(job)} if unjudged else set()
        return {
            t.qid: UNJUDGED_REASON if t.pk in bare else MODEL_UNJUDGED_REASON
            for t in unjudged
        }
    unjudged_ids = {t.pk for t in unjudged}
    return {
        t.qid: UNJUDGED_REASON if t.pk in unjudged_ids else NO_NUGGETS_REASON
        for t in topics_without_nuggets(job)
    }


def rule_undecided(job: MatchJob, rule: DecisionRule) -> list[Topic]:
    """The topics of :func:`rule_undecided_reasons`, by qid."""
    reasons = rule_undecided_reasons(job, rule)
    return [
        t for t in _by_qid(Topic.objects.filter(match_jobs=job)) if t.qid in reasons
    ]


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


def model_missing_reason(job: MatchJob) -> str:
    """Why a job has no model's p: nothing judged to fit on, or not fitted yet."""
    if len(topics_unjudged(job)) == job.topics.count():
        return (
            f"job {job.pk} has no relevance model: no document of its topics is "
            "judged, so there is nothing to fit the model on (the paper rule decides "
            "topics from their nuggets)"
        )
    return (
        f"job {job.pk} has no fitted probabilities (fit it first: manage.py match "
        f"--fit {job.pk})"
    )


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


@dataclass
class RuleEstimate:
    """Confusion counts of a rule on the judged documents, and the ratios."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    inferred: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def judged(self) -> int:
        return self.tp + self.fp + self.fn + self.tn


def rule_estimate(
    *, job: MatchJob, rule: DecisionRule, topics: Iterable[Topic] | None = None
) -> dict[str, RuleEstimate]:
    """Per qid and overall (key ``"all"``): precision and recall of the rule measured
    on the judged documents among the job's results."""
    decisions = rule_apply(job=job, rule=rule, topics=topics)
    threshold = job.relevant_threshold
    judged: dict[int, list[tuple[int, int]]] = {}
    for (topic_id, doc_id), grade in human_grades(decisions).items():
        judged.setdefault(topic_id, []).append((doc_id, grade))
    qids = dict(Topic.objects.filter(pk__in=list(decisions)).values_list("pk", "qid"))
    out: dict[str, RuleEstimate] = {"all": RuleEstimate()}
    for topic_id, decided in sorted(decisions.items(), key=lambda kv: qids[kv[0]]):
        est = out.setdefault(qids[topic_id], RuleEstimate())
        inferred_here = sum(decided.values())
        for target in (est, out["all"]):
            target.inferred += inferred_here
        # Only the judged documents count in the confusion table: visit those, not
        # every result of the topic.
        for doc_id, grade in judged.get(topic_id, []):
            if doc_id not in decided:
                continue
            inferred = decided[doc_id]
            relevant = grade >= threshold
            attr = (
                ("tp" if inferred else "fn")
                if relevant
                else ("fp" if inferred else "tn")
            )
            for target in (est, out["all"]):
                setattr(target, attr, getattr(target, attr) + 1)
    return out


def rule_fit(
    *,
    job: MatchJob,
    objective: str = "f1",
    scope: str = "global",
    beta: float = 1.0,
    min_relevant: int = 2,
    sources: str = "leave-out",
    assessors: Iterable[int] | None = None,
    relevant_threshold: int | None = None,
) -> DecisionRule:
    """The threshold rule with the best F-beta on the job's held-out judged documents.

    ``objective`` is ``"f1"`` (beta = 1) or ``"fbeta"`` (uses ``beta``). Judged =
    Judgment rows (of ``assessors`` only, when given; the human label, as
    :func:`human_grades`) for the job's results; relevant when the grade is >=
    ``relevant_threshold`` (default: the collection's). A nugget's own document matches
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
    if relevant_threshold is None:
        relevant_threshold = job.relevant_threshold
    judged = _held_out(job, assessors, relevant_threshold, sources == "leave-out")
    fit = rule_fit_thresholds(judged, beta=beta, scope=scope, min_relevant=min_relevant)
    return DecisionRule(
        kind="threshold", threshold=fit.overall.threshold, per_topic=fit.thresholds()
    )


def _held_out(
    job: MatchJob, assessors: Iterable[int] | None, threshold: int, leave_out: bool
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
        held_out[topics[topic_id]].append(
            (rescored.get(key, score), grade >= threshold)
        )
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


# --- per-topic inspection ---------------------------------------------------------------
