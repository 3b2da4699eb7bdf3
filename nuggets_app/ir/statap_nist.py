"""The text ``statAP_MQ_eval_v3.pl`` prints, byte for byte (docs/reference/algorithms.md 2.8).

``-q`` (per topic, long), ``-q -t`` (terse per-topic lines, summary on stderr) and the
summary-only forms. Numbers follow Perl: ``%f`` for the script's ``sprintf("%3f")``
values and ``%.15g`` (Perl's default stringification) for the others, ``NaN``/``Inf``
spelled as Perl spells them.

For topics without relevant documents the script prints the nDCG and variance left
over from the last topic it evaluated (in any run); ``stale=True`` reproduces that, so
the output can be compared with the script's, and ``stale=False`` prints ``NA``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from nuggets_app.ir.statap import P_CUTOFF, StatapResult, TopicStatap


@dataclass(frozen=True)
class NistText:
    """What the script writes to stdout and, in terse mode, the summary on stderr."""

    stdout: str
    stderr: str


def perl_g(value: float | int) -> str:
    """Perl's default number stringification (``%.15g``; integers as integers)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return format(value, ".15g")


def perl_f(value: float) -> str:
    """Perl's ``sprintf("%f")`` (six decimals)."""
    if math.isnan(value) or math.isinf(value):
        return perl_g(value)
    return f"{value:f}"


class _Writer:
    def __init__(self, *, per_topic: bool, terse: bool, stale: bool) -> None:
        self.per_topic = per_topic
        self.terse = terse
        self.stale = stale
        # The script keeps these across topics and runs; undefined prints as "".
        self.last_ndcg = ""
        self.last_var = ""
        self.out: list[str] = []
        self.err: list[str] = []

    def topic(self, t: TopicStatap, only: str) -> None:
        if self.per_topic:
            self.out.append(f"{t.qid}  " if self.terse else f"\n\ttopic={t.qid}  ")
        if t.label == "UMASS":
            if self.per_topic:
                self.out.append("UMASS\n")
            return
        if self.per_topic:
            excluded = (t.label == "NEU" and only == "mixed") or (
                t.label == "MIXED" and only == "neu"
            )
            self.out.append(
                f"{t.label} " + ("\n" if excluded or not self.terse else "")
            )
        if not t.evaluated:
            return
        if t.valid:
            ap, rp, p30 = perl_f(t.statap), perl_f(t.rprec), perl_f(t.p30)
            self.last_ndcg, self.last_var = perl_g(t.ndcg), perl_g(t.var)
            ndcg, var = self.last_ndcg, self.last_var
        else:
            missing = "-999" if self.terse else "NA--no relevant docs"
            ap, rp, p30 = missing, missing, "0"
            ndcg, var = (self.last_ndcg, self.last_var) if self.stale else ("NA", "NA")
        if not self.per_topic:
            return
        if self.terse:
            self.out.append(
                f"{ap}  {perl_f(t.est_r)}  {rp}  {p30}  {ndcg}  {var}  "
                f"{t.sampled_in_list} {t.sampled_rel_in_list} \n"
            )
            return
        self.out.append(
            f"\tRelevant={perl_f(t.est_r)}  sampled={t.n_sampled} "
            f"sampled_relev={t.n_sampled_rel}\n"
            f"\tsampled_in_list={t.sampled_in_list}  "
            f"sampled_relev_in_list={t.sampled_rel_in_list}\n"
            f"\tAP={ap}  R-prec={rp}  Prec_at_{P_CUTOFF}={p30}  nDCG={ndcg}\n"
            f"\tvarAP={var}\n"
        )

    def summary(self, result: StatapResult) -> None:
        s = result.summary
        g = perl_g
        if self.terse:
            self.err.append(
                f"\n valid_topics={s.valid_topics}"
                f"\n statMAP_on_valid_topics={g(s.stat_map)} ( VAR_MAP={g(s.var_map)} )"
                f"\n statMRP_on_valid_topics={g(s.stat_mrp)}"
                f"\n statMPC_{P_CUTOFF} _on_valid_topics={g(s.stat_mpc30)} "
                f"\n statMNDCG_on_valid_topics={g(s.stat_mndcg)} \n\n"
            )
            return
        self.out.append(
            f"\n valid_topics={s.valid_topics}"
            f"\n statMAP_on_valid_topics={g(s.stat_map)}    VAR_MAP={g(s.var_map)} "
            f"\n statMRP_on_valid_topics={g(s.stat_mrp)}"
            f"\n statMPC_{P_CUTOFF} _on_valid_topics={g(s.stat_mpc30)} "
            f"\n statMNDCG_on_valid_topics={g(s.stat_mndcg)} \n\n"
        )


def nist_report(
    results: Sequence[StatapResult],
    *,
    per_topic: bool = True,
    terse: bool = False,
    stale: bool = True,
) -> NistText:
    """Render results as ``statAP_MQ_eval_v3.pl [-q] [-t]`` prints them.

    ``per_topic`` is ``-q``, ``terse`` is ``-t``; the script's progress messages on
    stderr are not reproduced (only the terse summary is).
    """
    writer = _Writer(per_topic=per_topic, terse=terse, stale=stale)
    for result in results:
        for topic in result.topics:
            writer.topic(topic, result.only)
        writer.summary(result)
    return NistText("".join(writer.out), "".join(writer.err))
