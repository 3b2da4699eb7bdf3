"""The researcher dashboard's computations, each kept per input (``computed``).

Every function here takes plain values (collection id, qrels source keys, the decision
rule as a dict, measure names, ids) and returns a :class:`PageResult`: the tables a page
shows and offers as CSV, and its figures as chart geometry (``services.figures``) kept
with them, so a page and its SVG downloads are drawn from the same numbers. The input versions come from ``selectors_eval.*_version``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nuggets_app.evaluation import selectors as selectors_eval
from nuggets_app.evaluation.services import (
    comparison,
    diagnostics,
    estimates,
    figures,
    new_runs,
    uncertainty,
    verification,
)
from nuggets_app.evaluation.services.judge_circularity import circular_runs
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.lib.charts import Chart
from nuggets_app.models import Collection, MatchJob, Run, Sample
from nuggets_app.operations.services.computed import Progress, computed


@dataclass
class PageResult:
    """What a page shows: tables (also CSV), figures (drawn as SVG) and template
    values."""

    tables: dict[str, diagnostics.Table] = field(default_factory=dict)
    figures: dict[str, Chart] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)


def rule_params(rule: DecisionRule | None) -> dict[str, Any] | None:
    """A decision rule as the plain values the computations take (None: each job's
    default rule, :func:`~nuggets_app.inference.services.readiness.rule_default`)."""
    if rule is None:
        return None
    return {"kind": rule.kind, "threshold": rule.threshold, "n": rule.n}


def _rule(params: dict[str, Any] | None) -> DecisionRule | None:
    if params is None:
        return None
    return DecisionRule(
        kind=params["kind"], threshold=params["threshold"], n=params["n"]
    )


def _collection(collection_id: int) -> Collection:
    return Collection.objects.get(pk=collection_id)


class _Steps:
    """Progress over several phases: ``phase(i, n)`` reports step ``offset + i``."""

    def __init__(self, progress: Progress, total: int) -> None:
        self.progress, self.total, self.offset = progress, total, 0

    def phase(self, size: int) -> Progress:
        offset = self.offset
        self.offset += size
        return lambda done, _n: self.progress(offset + done, self.total)


# --- Evaluate runs ----------------------------------------------------------------------
def _runs_versions(
    *,
    collection_id: int,
    qrels: str,
    sample: int | None,
    expected: int | None = None,
    **_: Any,
):
    collection = _collection(collection_id)
    versions = [
        selectors_eval.runs_version(collection),
        selectors_eval.source_version(collection, qrels),
    ]
    if sample is not None or expected is not None:
        versions += [["sample", sample], selectors_eval.judgments_version(collection)]
    if expected is not None:
        job = MatchJob.objects.filter(pk=expected, collection=collection).first()
        versions.append(selectors_eval.job_version(job) if job else ["job", expected])
    return versions


@computed(versions=_runs_versions)
def runs_evaluation(
    *,
    collection_id: int,
    qrels: str,
    rule: dict[str, Any] | None,
    measures: list[str],
    sample: int | None,
    progress: Progress,
    expected: int | None = None,
) -> PageResult:
    """Every stored run against a qrels source, statAP with a sample's prels, and the
    expected measures under a job's probabilities of relevance (``expected``)."""
    collection = _collection(collection_id)
    count = Run.objects.filter(collection=collection).count()
    steps = _Steps(progress, count * (3 if sample is not None else 2))
    resolved = selectors_eval.qrels_resolve(
        collection=collection, key=qrels, rule=_rule(rule)
    )
    runs = selectors_eval.collection_runs(collection, progress=steps.phase(count))
    results = diagnostics.runs_evaluate(
        runs=runs, qrels=resolved, measures=measures, progress=steps.phase(count)
    )
    means, topics = diagnostics.evaluation_tables(results)
    page = PageResult(tables={"evaluation": means, "evaluation_topics": topics})
    statap = None
    if sample is not None:
        prels = selectors_eval.sample_prels(Sample.objects.get(pk=sample))
        statap = diagnostics.runs_statap(
            runs=runs, prels=prels, progress=steps.phase(count)
        )
        page.tables.update(
            statap=diagnostics.statap_table(statap),
            statap_topics=diagnostics.statap_topics_table(statap),
        )
        page.context["statap_above_one"] = statap_above_one(statap)
    if expected is not None:
        job = MatchJob.objects.filter(pk=expected, collection=collection).first()
        if job is None:
            raise selectors_eval.SourceError(f"no job {expected} in {collection.name}")
        table = uncertainty.expected_table(
            uncertainty.runs_expected(
                runs=runs, probabilities=selectors_eval.job_probability_qrels(job)
            ),
            statap,
        )
        page.tables["expected"] = table
        page.context["expected_flags"] = uncertainty.expected_flags(table)
    if sample is not None and expected is not None:
        # Model-assisted MAP and the bias check (services.estimates)
        chosen = Sample.objects.get(pk=sample)
        probs = estimates.job_crossfit(job=job, sample=chosen)
        evaluation, new, pending = new_runs.job_runs_evaluation(
            job=job, sample=chosen, runs=runs
        )
        found = evaluation.estimates or {}
        assisted = estimates.estimates_table(found, new=new)
        page.tables["model_assisted"] = assisted
        # Columns run, pool, maAP, ci_low, ci_high, ..., bias_flag, reason.
        chart = figures.model_assisted_chart(
            (r[0], r[2], r[3], r[4], r[-2] == "flagged") for r in assisted.rows
        )
        if chart is not None:
            page.figures["model_assisted"] = chart
        page.context["new_runs_pending"] = pending
        page.context["relevance"] = job.relevance_text()
        page.context.update(new_runs.runs_page_context(job, evaluation, new))
        page.context["model_only_topics"] = estimates.job_model_only_topics(
            job=job, sample=chosen, probs=probs
        )
        page.context["model_only_note"] = estimates.MODEL_ONLY_NOTE
        # Runs built with a kept judge's model: their MAP without that judge too.
        page.context["judge_circular"] = [
            vars(c) for c in circular_runs(job=job, sample=chosen, runs=runs)
        ]
    return page


def statap_above_one(results: dict[str, Any]) -> list[str]:
    """The statAP means some run has above 1 (the page says why that can happen)."""
    names = {
        "statMAP": "stat_map",
        "statMRP": "stat_mrp",
        "statMPC@30": "stat_mpc30",
        "statMNDCG": "stat_mndcg",
    }
    return [
        name
        for name, attr in names.items()
        if any(getattr(r.summary, attr) > 1 for r in results.values())
    ]


# --- Compare qrels ----------------------------------------------------------------------
def _compare_versions(*, collection_id: int, qrels_a: str, qrels_b: str, **_: Any):
    collection = _collection(collection_id)
    # "common-topics": results kept before comparisons were cut to the common topics
    # are not served again.
    return [
        "common-topics",
        selectors_eval.runs_version(collection),
        selectors_eval.source_version(collection, qrels_a),
        selectors_eval.source_version(collection, qrels_b),
    ]


@computed(versions=_compare_versions)
def qrels_comparison(
    *,
    collection_id: int,
    qrels_a: str,
    qrels_b: str,
    rule: dict[str, Any] | None,
    measure: str,
    progress: Progress,
) -> PageResult:
    """Every run scored under qrels A and B over the topics both judge, and how the
    rankings agree (:func:`~nuggets_app.evaluation.services.comparison.qrels_compare`)."""
    collection = _collection(collection_id)
    count = Run.objects.filter(collection=collection).count()
    steps = _Steps(progress, count * 3)
    decision = _rule(rule)
    a = selectors_eval.qrels_resolve(collection=collection, key=qrels_a, rule=decision)
    b = selectors_eval.qrels_resolve(collection=collection, key=qrels_b, rule=decision)
    compared = comparison.qrels_compare(
        runs=selectors_eval.collection_runs(collection, progress=steps.phase(count)),
        qrels_a=a,
        qrels_b=b,
        measure=measure,
        progress=steps.phase(2 * count),
    )
    summary, moves = compared.tables()
    return PageResult(
        tables={"comparison_summary": summary, "comparison": moves},
        figures={"scatter": figures.comparison_chart(compared)},
        context={
            "ranking": compared.ranking,
            "compared_topics": compared.topics.sentence(),
        },
    )


# --- Trust diagnostics ------------------------------------------------------------------
def _trust_versions(*, collection_id: int, job: int, human: str, **_: Any):
    collection = _collection(collection_id)
    return [
        selectors_eval.source_version(collection, f"inferred:{job}"),
        selectors_eval.source_version(collection, human),
        selectors_eval.nuggets_version(collection),
        selectors_eval.documents_version(collection),
    ]


@computed(versions=_trust_versions)
def trust_diagnostics(
    *,
    collection_id: int,
    job: int,
    human: str,
    rule: dict[str, Any] | None,
    bins: int,
    length_bins: int,
    progress: Progress,
) -> PageResult:
    """Matcher MAP, DO/HSA and length bias of a job's inferred qrels."""
    collection = _collection(collection_id)
    progress(0, 1)
    report = diagnostics.trust_report(
        collection=collection,
        job=(found := MatchJob.objects.get(pk=job)),
        rule=_rule(rule) or rule_default(found),
        human_key=human,
        bins=bins,
        length_bins=length_bins,
    )
    progress(1, 1)
    return PageResult(
        tables={t.name: t for t in report.tables()},
        figures={
            "matcher_map": figures.matcher_map_chart(report.matcher),
            "histograms": figures.histogram_chart(report.histograms),
            "length_bias": figures.length_bias_chart(report.lengths),
        },
        context={"report": report},
    )


def _run_histogram_versions(*, collection_id: int, run: str, qrels: str, **_: Any):
    collection = _collection(collection_id)
    return [
        selectors_eval.runs_version(collection),
        selectors_eval.source_version(collection, qrels),
    ]


@computed(versions=_run_histogram_versions)
def run_histograms(
    *, collection_id: int, run: str, qrels: str, bins: int, progress: Progress
) -> PageResult:
    """DO/HSA of a stored run's scores against a qrels source (all judged docs)."""
    collection = _collection(collection_id)
    stored = Run.objects.get(collection=collection, name=run)
    resolved = selectors_eval.qrels_resolve(collection=collection, key=qrels)
    labels = diagnostics.binary_labels(resolved, level=collection.relevance_level)
    analysis = diagnostics.histogram_analysis(
        scores=selectors_eval.run_scores(stored), labels=labels, bins=bins
    )
    summary, counts = analysis.tables()
    return PageResult(
        tables={
            "run_do_hsa": diagnostics.Table(
                "run_do_hsa", summary.columns, summary.rows
            ),
            "run_histograms": diagnostics.Table(
                "run_histograms", counts.columns, counts.rows
            ),
        },
        figures={
            "run_histograms": figures.histogram_chart(analysis, id="run_histograms")
        },
    )


# --- Verification -----------------------------------------------------------------------
def _verification_versions(*, collection_id: int, sample: int, **_: Any):
    collection = _collection(collection_id)
    # The draws (inferred labels, strata) are stored once with the sample, so re-scoring
    # its job changes nothing; the people's judgments of the drawn documents do.
    drawn = Sample.objects.filter(pk=sample).values_list("created_at", flat=True)
    return [
        selectors_eval.collection_version(collection),
        ["sample", sample, str(drawn.first())],
        selectors_eval.judgments_version(collection),
    ]


@computed(versions=_verification_versions)
def verification_agreement(
    *, collection_id: int, sample: int, progress: Progress
) -> PageResult:
    """Agreement of inferred and human labels on a verification sample."""
    stored = Sample.objects.select_related("pool__collection").get(
        pk=sample, pool__collection_id=collection_id
    )
    report = verification.verification_report(sample=stored)
    tables = {"verification": report.table()}
    if report.calibration:
        tables["calibration"] = report.calibration_table()
    chart = figures.agreement_chart(report)
    return PageResult(
        tables=tables,
        figures={"agreement": chart} if chart else {},
        context={"report": report},
    )
