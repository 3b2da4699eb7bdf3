"""Reusability of a test collection: judged-only measures and held-out rank errors.

Pure and Django-free. A collection is *reusable* when it scores systems that did not
contribute to its pool as it scores those that did (Zobel 1998). The reusability
experiment (:mod:`lab.services.simulation_reuse`) holds a run, or a
group of runs, out of the pool, builds the collection from the others, and evaluates the
held-out runs as new; this module holds the measures that experiment compares and the
summary of its rank errors.

Measures over a judged set only (``judged``: ``{docno: 0 or 1}`` of one topic):

* ``bpref`` (Buckley & Voorhees 2004, trec_eval's definition): with ``R`` judged
  relevant and ``N`` judged non-relevant documents,
  ``bpref = (1/R) Σ_{relevant retrieved d} (1 - min(n_d, R) / min(R, N))``, ``n_d`` the
  judged non-relevant documents ranked above ``d`` (the fraction is 0 when ``N = 0``);
* ``condensed AP`` (Sakai 2007): AP of the *condensed list*, the ranking with every
  unjudged document removed, over the ``R`` judged relevant documents.

Both are 0 for a topic without a judged relevant document, which is left out of the
mean (trec_eval averages bpref over topics with ``R > 0`` too).

Held-out summary (:func:`reusability_summary`): the rank of a run is its position among
all runs by score (1 = best, ties broken by name). For every held-out run ``r`` with
full-qrels score ``s_r`` and rank ``k_r``, and estimated score ``ŝ_r`` and rank ``k̂_r``
among the runs of its own experiment:

* ``mean_abs_rank_error`` = mean of ``|k̂_r - k_r|``;
* ``max_rank_drop`` = largest ``k̂_r - k_r`` (0 when no run drops);
* ``mean_rel_error`` = mean of ``|ŝ_r - s_r| / s_r`` over runs with ``s_r > 0``;
* ``tau``: Kendall's tau between the full-qrels scores and the held-out scores
  ``ŝ_r`` of every run (each run scored in the experiment that held it out).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from nuggets_app.errors import DomainError
from nuggets_app.ir.ranking import kendall_tau

_PREFIX = re.compile(r"[-_.]")


class ReusabilityError(DomainError):
    """A run-group file or held-out set that cannot be used; the message says why."""


def bpref(ranking: Sequence[str], judged: Mapping[str, int]) -> float:
    """trec_eval's bpref of one topic (0 without a judged relevant document)."""
    relevant = sum(1 for v in judged.values() if v > 0)
    nonrelevant = len(judged) - relevant
    if relevant == 0:
        return 0.0
    bound = min(relevant, nonrelevant)
    above, total = 0, 0.0
    for docno in ranking:
        label = judged.get(docno)
        if label is None:
            continue
        if label > 0:
            total += 1.0 - (min(above, relevant) / bound if bound else 0.0)
        else:
            above += 1
    return total / relevant


def condensed_ap(ranking: Sequence[str], judged: Mapping[str, int]) -> float:
    """Sakai's condensed-list AP of one topic: unjudged documents removed."""
    relevant = sum(1 for v in judged.values() if v > 0)
    if relevant == 0:
        return 0.0
    found, rank, total = 0, 0, 0.0
    for docno in ranking:
        label = judged.get(docno)
        if label is None:
            continue
        rank += 1
        if label > 0:
            found += 1
            total += found / rank
    return total / relevant


def judged_mean(
    rankings: Mapping[str, Sequence[str]],
    judged: Mapping[str, Mapping[str, int]],
    measure: str,
) -> float:
    """Mean of ``bpref`` or ``condensed_ap`` over the topics of ``judged`` with a
    judged relevant document (a topic the run does not answer scores 0)."""
    function = {"bpref": bpref, "condensed_ap": condensed_ap}[measure]
    values = [
        function(rankings.get(qid, ()), labels)
        for qid, labels in judged.items()
        if any(v > 0 for v in labels.values())
    ]
    return math.fsum(values) / len(values) if values else math.nan


def run_groups(names: Iterable[str]) -> dict[str, str]:
    """``{run: group}`` by the shared prefix of the names: the part before the first
    ``-``, ``_`` or ``.``, without trailing digits (``TUW19-p1-f`` and ``TUW19-p2-re``
    are ``TUW``; ``runid2`` is ``runid``; a name that is all digits keeps them)."""
    out = {}
    for name in names:
        head = _PREFIX.split(name, maxsplit=1)[0]
        out[name] = head.rstrip("0123456789") or head
    return out


def groups_parse(lines: Iterable[str], *, source: str = "groups") -> dict[str, str]:
    """A groups file: ``run group`` per line (blank lines and ``#`` comments
    skipped); a run named twice is an error naming the line."""
    out: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.split()
        if len(parts) != 2:
            raise ReusabilityError(
                f"{source}:{number}: expected 'RUN GROUP', got {line.strip()!r}"
            )
        run, group = parts
        if run in out:
            raise ReusabilityError(f"{source}:{number}: run {run} is listed twice")
        out[run] = group
    return out


def ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """Rank of every run by score (1 = highest; NaN last; ties by name)."""

    def key(run: str) -> tuple[float, str]:
        value = scores[run]
        return (-value if value == value else math.inf, run)

    return {run: i for i, run in enumerate(sorted(scores, key=key), start=1)}


@dataclass(frozen=True)
class HeldOut:
    """One held-out run under one estimator: its full-qrels score and rank among all
    runs, and its estimated score and rank in its own experiment."""

    run: str
    full: float
    full_rank: int
    score: float
    rank: int

    @property
    def rank_error(self) -> int:
        return self.rank - self.full_rank

    @property
    def rel_error(self) -> float:
        if not self.full > 0 or self.score != self.score:
            return math.nan
        return abs(self.score - self.full) / self.full


def held_out(
    run: str,
    *,
    full: Mapping[str, float],
    estimated: Mapping[str, float],
) -> HeldOut:
    """``run``'s row: ``full`` scores every run under the full qrels, ``estimated``
    every run of the experiment that held ``run`` out."""
    return HeldOut(
        run, full[run], ranks(full)[run], estimated[run], ranks(estimated)[run]
    )


def reusability_summary(
    rows: Sequence[HeldOut], full: Mapping[str, float]
) -> dict[str, float]:
    """The module docstring's summary of one estimator's held-out rows."""
    if not rows:
        raise ReusabilityError("no held-out runs to summarise")
    rel = [r.rel_error for r in rows if r.rel_error == r.rel_error]
    scores = {r.run: r.score for r in rows}
    return {
        "mean_abs_rank_error": math.fsum(abs(r.rank_error) for r in rows) / len(rows),
        "max_rank_drop": float(max(0, *(r.rank_error for r in rows))),
        "mean_rel_error": math.fsum(rel) / len(rel) if rel else math.nan,
        "tau": kendall_tau({r: full[r] for r in scores}, scores)
        if len(scores) > 1
        else math.nan,
        "runs": float(len(rows)),
    }
