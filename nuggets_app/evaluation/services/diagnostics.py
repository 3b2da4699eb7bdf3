"""Evaluation and trust diagnostics of inferred qrels, as tables for pages and files.

Every figure is computed by ``nuggets_app.ir``; this module gathers the inputs
(``nuggets_app.evaluation.selectors``) and shapes the outputs as :class:`Table` rows, so a
page, its CSV download and ``manage.py diagnose`` show the same numbers:

- runs evaluated with the standard measures (ir_measures) against any qrels source,
  and statAP from a sample's judgments and inclusion probabilities;
- the matcher as a retrieval function: AP of the job's scored documents ranked by match
  score against held-out human labels (judged, and not a nugget source), per topic;
- histogram analysis: DO and HSA of the scores of judged relevant against judged
  non-relevant documents, per topic (histograms normalised per topic, summed for the
  all-topics plot);
- length bias: equal-size length bins of the collection, human and inferred qrels side
  by side, Mann-Whitney U tests.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nuggets_app.evaluation import selectors as selectors_eval
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.ir.histograms import DEFAULT_BINS, ScoreHistograms, do_hsa
from nuggets_app.ir.lengthbias import (
    LengthBin,
    LengthTest,
    length_bias_table,
    length_tests,
)
from nuggets_app.ir.measures import (
    DEFAULT_MEASURES,
    RunEvaluation,
    run_evaluate,
    scored_ranking_map,
)
from nuggets_app.ir.prels import TopicPrels, topic_key
from nuggets_app.ir.statap import StatapResult, statap_evaluate, statap_rows
from nuggets_app.lib import plots
from nuggets_app.lib.csvout import csv_writer
from nuggets_app.models import Collection, MatchJob

QrelsDict = dict[str, dict[str, int]]
Scores = Mapping[str, Mapping[str, float]]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Table:
    """A named table: what a page shows and what its CSV download holds."""

    name: str
    columns: tuple[str, ...]
    rows: list[tuple]

    def csv_text(self) -> str:
        """CSV with a header; floats at full precision (``repr``), NaN as ``NaN``; cells
        a spreadsheet would run as formulas are neutralised (``nuggets_app.lib.csvout``)."""
        out = io.StringIO()
        writer = csv_writer(out)
        writer.writerow(self.columns)
        writer.writerows([csv_value(v) for v in row] for row in self.rows)
        return out.getvalue()

    def write(self, directory: Path) -> Path:
        """Write ``<name>.csv`` into ``directory``."""
        path = directory / f"{self.name}.csv"
        path.write_text(self.csv_text(), encoding="utf-8")
        return path


def csv_value(value: object) -> str:
    """One CSV cell: ``repr`` for floats (round-trips exactly), '' for None."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else repr(value)
    return str(value)


def _mean(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


# --- evaluation of runs -----------------------------------------------------------------
def runs_evaluate(
    *,
    runs: Mapping[str, Scores],
    qrels: QrelsDict,
    measures: Sequence[str] = (),
    progress: Progress | None = None,
) -> dict[str, RunEvaluation]:
    """Every run evaluated with ir_measures (default measures when none are given);
    ``progress(runs done, runs)`` after each run."""
    chosen = tuple(measures) or DEFAULT_MEASURES
    out = {}
    for done, (name, scores) in enumerate(runs.items(), 1):
        out[name] = run_evaluate(qrels, scores, measures=chosen)
        if progress is not None:
            progress(done, len(runs))
    return out


def evaluation_tables(results: Mapping[str, RunEvaluation]) -> tuple[Table, Table]:
    """The means (one row per run, with trec_eval's ``num_q``: the number of topics
    averaged over) and the per-topic values (long format)."""
    measures = next(iter(results.values())).measures if results else ()
    means = Table(
        "evaluation",
        ("run", *measures, "num_q"),
        [
            (name, *(ev.mean.get(m, math.nan) for m in measures), len(ev.per_topic))
            for name, ev in results.items()
        ],
    )
    topics = Table(
        "evaluation_topics",
        ("run", "measure", "topic", "value"),
        [
            (name, measure, qid, value)
            for name, ev in results.items()
            for measure, qid, value in ev.rows(per_topic=True)
        ],
    )
    return means, topics


def runs_statap(
    *,
    runs: Mapping[str, Scores],
    prels: Mapping[str, TopicPrels],
    progress: Progress | None = None,
) -> dict[str, StatapResult]:
    """statAP of every run against a sample's prels; ``progress`` after each run."""
    out = {}
    for done, (name, scores) in enumerate(runs.items(), 1):
        out[name] = statap_evaluate(prels, scores, name=name)
        if progress is not None:
            progress(done, len(runs))
    return out


def statap_table(results: Mapping[str, StatapResult]) -> Table:
    """Per run: statMAP, its 95% interval and the other means, plus valid topics."""
    rows = []
    for name, result in results.items():
        s = result.summary
        low, high = s.ci95
        rows.append(
            (
                name,
                s.stat_map,
                low,
                high,
                s.var_map,
                s.stat_mrp,
                s.stat_mpc30,
                s.stat_mndcg,
                s.mean_est_r,
                s.valid_topics,
            )
        )
    columns = (
        "run",
        "statMAP",
        "ci_low",
        "ci_high",
        "VAR_MAP",
        "statMRP",
        "statMPC@30",
        "statMNDCG",
        "mean_estR",
        "valid_topics",
    )
    return Table("statap", columns, rows)


def statap_topics_table(results: Mapping[str, StatapResult]) -> Table:
    """Per run and topic: the statAP measures (``statap`` command's rows)."""
    return Table(
        "statap_topics",
        ("run", "measure", "topic", "value"),
        [
            (name, m, qid, v)
            for name, result in results.items()
            for m, qid, v in statap_rows(result, per_topic=True)
        ],
    )


# --- the matcher as a retrieval function ------------------------------------------------
@dataclass(frozen=True)
class MatcherMap:
    """AP per topic of the match scores against held-out labels, and their mean."""

    per_topic: dict[str, float]
    mean: float
    labels: dict[str, dict[str, int]]

    def table(self) -> Table:
        """qid, held-out judged, of them relevant, AP; then ``all`` with the MAP."""
        rows = [
            (qid, len(lab), sum(lab.values()), self.per_topic[qid])
            for qid, lab in self.labels.items()
        ]
        judged = sum(r[1] for r in rows)
        relevant = sum(r[2] for r in rows)
        rows.append(("all", judged, relevant, self.mean))
        return Table("matcher_map", ("topic", "judged", "relevant", "AP"), rows)


def matcher_map(*, job: MatchJob, judgments: QrelsDict, level: int) -> MatcherMap:
    """MAP of the job's scores against the held-out judged documents (module doc)."""
    labels = selectors_eval.held_out_labels(job, judgments, level=level)
    per_topic, mean = scored_ranking_map(selectors_eval.job_scores(job), labels)
    return MatcherMap(per_topic, mean, labels)


# --- histogram analysis -----------------------------------------------------------------
@dataclass(frozen=True)
class TopicHistogram:
    """DO, HSA and the histograms of one topic's judged scores."""

    qid: str
    relevant: int
    nonrelevant: int
    do: float
    hsa: float
    hist: ScoreHistograms


@dataclass(frozen=True)
class HistogramAnalysis:
    """Per-topic DO/HSA and the per-topic histograms summed over topics."""

    bins: int
    topics: list[TopicHistogram]
    pooled_relevant: tuple[int, ...]
    pooled_nonrelevant: tuple[int, ...]

    def tables(self) -> tuple[Table, Table]:
        """DO/HSA per topic (``all`` = means), and bin counts per topic and pooled."""
        rows = [(t.qid, t.relevant, t.nonrelevant, t.do, t.hsa) for t in self.topics]
        rows.append(
            (
                "all",
                sum(t.relevant for t in self.topics),
                sum(t.nonrelevant for t in self.topics),
                _mean(t.do for t in self.topics),
                _mean(t.hsa for t in self.topics),
            )
        )
        summary = Table(
            "do_hsa", ("topic", "relevant", "nonrelevant", "DO", "HSA"), rows
        )
        counts = [
            (t.qid, b, t.hist.edges[b], t.hist.edges[b + 1], r, n)
            for t in self.topics
            for b, (r, n) in enumerate(
                zip(t.hist.relevant, t.hist.nonrelevant, strict=True)
            )
        ]
        counts += [
            ("all", b, b / self.bins, (b + 1) / self.bins, r, n)
            for b, (r, n) in enumerate(
                zip(self.pooled_relevant, self.pooled_nonrelevant, strict=True)
            )
        ]
        columns = ("topic", "bin", "low", "high", "relevant", "nonrelevant")
        return summary, Table("histograms", columns, counts)


def histogram_analysis(
    *, scores: Scores, labels: Mapping[str, Mapping[str, int]], bins: int = DEFAULT_BINS
) -> HistogramAnalysis:
    """DO and HSA per topic of ``scores`` for labelled relevant (1) and non-relevant
    (0) documents; labelled documents without a score are left out."""
    topics = []
    pooled_r, pooled_n = [0] * bins, [0] * bins
    for qid in sorted(labels, key=topic_key):
        topic_scores = scores.get(qid, {})
        rel = [
            topic_scores[d] for d, v in labels[qid].items() if v and d in topic_scores
        ]
        non = [
            topic_scores[d]
            for d, v in labels[qid].items()
            if not v and d in topic_scores
        ]
        if not rel and not non:
            continue
        do, hsa, hist = do_hsa(rel, non, bins=bins)
        topics.append(TopicHistogram(qid, len(rel), len(non), float(do), hsa, hist))
        for b in range(bins):
            pooled_r[b] += hist.relevant[b]
            pooled_n[b] += hist.nonrelevant[b]
    return HistogramAnalysis(bins, topics, tuple(pooled_r), tuple(pooled_n))


def binary_labels(qrels: QrelsDict, *, level: int) -> dict[str, dict[str, int]]:
    """``rel >= level`` as 1, other judged grades as 0 (negative grades dropped)."""
    return {
        qid: {d: int(rel >= level) for d, rel in docs.items() if rel >= 0}
        for qid, docs in qrels.items()
    }


# --- length bias ------------------------------------------------------------------------
@dataclass(frozen=True)
class LengthBias:
    """Per-bin shares for human (and inferred) qrels and the Mann-Whitney U tests."""

    human: list[LengthBin]
    inferred: list[LengthBin] | None
    tests: list[LengthTest] = field(default_factory=list)

    def tables(self) -> tuple[Table, Table]:
        """Bins (both qrels, long format) and the tests."""
        columns = (
            "qrels",
            "bin",
            "documents",
            "min_length",
            "max_length",
            "judged",
            "relevant",
            "judged_share",
            "relevant_share",
            "p_rel_given_judged",
        )
        rows = []
        for label, table in (("human", self.human), ("inferred", self.inferred)):
            for b in table or []:
                rows.append(
                    (
                        label,
                        b.index,
                        b.documents,
                        b.min_length,
                        b.max_length,
                        b.judged,
                        b.relevant,
                        b.judged_share,
                        b.relevant_share,
                        b.p_rel_given_judged,
                    )
                )
        tests = Table(
            "length_tests",
            (
                "first",
                "second",
                "n_first",
                "n_second",
                "U",
                "p_value",
                "median_first",
                "median_second",
            ),
            [
                (
                    t.first,
                    t.second,
                    t.n_first,
                    t.n_second,
                    t.u,
                    t.p_value,
                    t.median_first,
                    t.median_second,
                )
                for t in self.tests
            ],
        )
        return Table("length_bias", columns, rows), tests


def length_bias(
    *,
    lengths: Mapping[str, int],
    human: QrelsDict,
    inferred: QrelsDict | None,
    bins: int = 10,
    level: int = 1,
) -> LengthBias:
    """Length-bias tables of human and inferred qrels over the same collection bins."""
    flat_h = selectors_eval.flat_judgments(human)
    flat_i = selectors_eval.flat_judgments(inferred) if inferred is not None else None
    return LengthBias(
        human=length_bias_table(lengths, flat_h, bins=bins, level=level),
        inferred=(
            length_bias_table(lengths, flat_i, bins=bins, level=level)
            if flat_i is not None
            else None
        ),
        tests=length_tests(lengths, flat_h, flat_i, level=level),
    )


# --- everything for one job, written to a folder ----------------------------------------
@dataclass(frozen=True)
class TrustReport:
    """The trust diagnostics of one job under one decision rule."""

    matcher: MatcherMap
    histograms: HistogramAnalysis
    lengths: LengthBias

    def tables(self) -> list[Table]:
        """Every table of the report."""
        return [self.matcher.table(), *self.histograms.tables(), *self.lengths.tables()]


def trust_report(
    *,
    collection: Collection,
    job: MatchJob,
    rule: DecisionRule,
    human_key: str = "human",
    bins: int = DEFAULT_BINS,
    length_bins: int = 10,
) -> TrustReport:
    """Matcher MAP, DO/HSA (held-out labels) and length bias of a job's inferred qrels.

    ``human_key`` names the human qrels source (``human`` or ``qrels:<id>``).
    """
    if job.collection_id != collection.pk:
        raise selectors_eval.SourceError(f"job {job.pk} is not a job of {collection}")
    level = collection.relevance_level
    human = selectors_eval.qrels_resolve(collection=collection, key=human_key)
    inferred = selectors_eval.qrels_resolve(
        collection=collection, key=f"inferred:{job.pk}", rule=rule
    )
    matcher = matcher_map(job=job, judgments=human, level=level)
    hist = histogram_analysis(
        scores=selectors_eval.job_scores(job), labels=matcher.labels, bins=bins
    )
    lengths = length_bias(
        lengths=selectors_eval.document_lengths(collection),
        human=human,
        inferred=inferred,
        bins=length_bins,
        level=level,
    )
    return TrustReport(matcher, hist, lengths)


def trust_report_write(report: TrustReport, directory: Path) -> list[Path]:
    """Every table as CSV and every plot as PNG into ``directory`` (created)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = [table.write(directory) for table in report.tables()]
    figures = {
        "matcher_map": plots.matcher_map_figure(report.matcher),
        "histograms": plots.histogram_figure(report.histograms),
        "length_bias": plots.length_bias_figure(report.lengths),
    }
    for name, data in figures.items():
        path = directory / f"{name}.png"
        path.write_bytes(data)
        written.append(path)
    return written
