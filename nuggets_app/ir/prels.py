"""Reading prels and runs for statAP the way ``statAP_MQ_eval_v3.pl`` reads them.

Specification: docs/reference/algorithms.md sections 2.2-2.3. Files are parsed by the
importers (:func:`nuggets_app.importers.qrels.parse_qrels`, ``kind="prels"``, whose
records fit :class:`PrelsRecordLike`); here the script's record processing is applied
(:func:`prels_load`): ``rel == -999`` and ``NA`` records are skipped, methods 0 and 2 get
``π = 1`` unless ``sampled_only`` (the script's ``-f``), and counters per topic record how
each topic was judged. Accidents of the script's token-stream reader are rejected instead
(docs/reference/algorithms.md 2.9): non-contiguous topics, duplicate documents, a relevant document with
``π = 0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from nuggets_app.errors import DomainError

# The grade of a placeholder line, which the evaluator skips (docs/reference/algorithms.md
# 1.4); the importers read prels with the same constant.
PLACEHOLDER_REL = -999


class StatapInputError(DomainError):
    """Bad prels or run input; ``str()`` is ``FILE:LINE: problem``."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


class PrelsRecord(NamedTuple):
    """One prels judgment built in memory (a simulation's sample, a stored row);
    ``inclusion_prob`` is None for ``NA``. Parsed files give the importers'
    ``QrelsLine``, which has the same fields."""

    line: int
    qid: str
    docno: str
    rel: int
    method: int | None
    inclusion_prob: float | None


class PrelsRecordLike(Protocol):
    """Any prels record with these fields (the importers' ``QrelsLine`` fits)."""

    @property
    def line(self) -> int: ...
    @property
    def qid(self) -> str: ...
    @property
    def docno(self) -> str: ...
    @property
    def rel(self) -> int: ...
    @property
    def method(self) -> int | None: ...
    @property
    def inclusion_prob(self) -> float | None: ...


@dataclass
class TopicPrels:
    """Stored judgments of one topic after the script's record processing (2.2)."""

    qid: str
    rel: dict[str, int] = field(default_factory=dict)
    inclusion_prob: dict[str, float] = field(default_factory=dict)
    umass: int = 0
    neu: int = 0
    n_sampled: int = 0
    n_rel: int = 0
    n_high: int = 0
    # Optional variance factor per sampled document, replacing ``(1 - π)/π²`` in the
    # model-assisted variance (samples in rounds: nuggets_app.ir.rounds).
    var_weight: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``UMASS`` (no statAP-sampled document), ``NEU`` (only sampled) or ``MIXED``."""
        if self.neu == 0:
            return "UMASS"
        return "NEU" if self.umass == 0 else "MIXED"

    @property
    def est_r(self) -> float:
        """``R̂ = Σ 1/π`` over stored relevant documents (file order)."""
        total = 0.0
        for docno, rel in self.rel.items():
            if rel > 0:
                total += 1 / self.inclusion_prob[docno]
        return total


def prels_load(
    records: Iterable[PrelsRecordLike],
    *,
    source: str = "<prels>",
    sampled_only: bool = False,
) -> dict[str, TopicPrels]:
    """Apply the script's record processing (docs/reference/algorithms.md 2.2) to parsed prels.

    ``sampled_only`` is the script's ``-f``: method-0 documents are dropped and method-2
    documents keep their given π; by default methods 0 and 2 get ``π = 1``. Records with
    ``rel == -999``, ``NA`` or out-of-range π are skipped as the script skips them.
    A ``method`` of None (``NA``) counts as neither selector, like unknown codes.
    Rejected: a topic split over non-contiguous blocks, a document listed twice for a
    topic, a relevant document whose π is 0.
    """
    topics: dict[str, TopicPrels] = {}
    seen: dict[str, set[str]] = {}
    current: TopicPrels | None = None
    for rec in records:
        if rec.rel == PLACEHOLDER_REL:
            continue
        if current is None or current.qid != rec.qid:
            if rec.qid in topics:
                raise StatapInputError(
                    source, rec.line, f"topic {rec.qid} is not contiguous in the file"
                )
            current = topics[rec.qid] = TopicPrels(rec.qid)
            seen[rec.qid] = set()
        if rec.docno in seen[rec.qid]:
            raise StatapInputError(
                source,
                rec.line,
                f"document {rec.docno} listed twice for topic {rec.qid}",
            )
        seen[rec.qid].add(rec.docno)
        _prels_store(current, rec, source=source, sampled_only=sampled_only)
    return topics


def _prels_store(
    topic: TopicPrels, rec: PrelsRecordLike, *, source: str, sampled_only: bool
) -> None:
    """Steps 3-10 of docs/reference/algorithms.md 2.2 for one record of ``topic``."""
    iprob = rec.inclusion_prob
    if iprob is None or iprob < 0 or iprob > 1 or rec.rel <= PLACEHOLDER_REL:
        return
    if rec.method in (0, 2):
        topic.umass += 1
    if rec.method in (1, 2, 4):
        topic.neu += 1
    if rec.method == 0 and sampled_only:
        return
    if rec.method in (0, 2) and not sampled_only:
        iprob = 1.0
    if rec.rel > 0 and iprob == 0:
        raise StatapInputError(
            source, rec.line, f"relevant document {rec.docno} has inclusion_prob 0"
        )
    if rec.rel >= 1:
        topic.n_rel += 1
    if rec.rel > 1:
        topic.n_high += 1
    topic.rel[rec.docno] = rec.rel
    topic.inclusion_prob[rec.docno] = iprob
    topic.n_sampled += 1


def run_scores(
    entries: Iterable[tuple[int, str, str, float]], *, source: str = "<run>"
) -> dict[str, dict[str, float]]:
    """Build ``qid -> {docno: score}`` from ``(line, qid, docno, score)`` run entries.

    Rejects a document listed twice for a topic and a topic split over non-contiguous
    blocks (both silently change the script's list length).
    """
    run: dict[str, dict[str, float]] = {}
    last: str | None = None
    for line, qid, docno, score in entries:
        if qid != last:
            if qid in run:
                raise StatapInputError(source, line, f"topic {qid} is not contiguous")
            run[qid] = {}
            last = qid
        if docno in run[qid]:
            raise StatapInputError(
                source, line, f"document {docno} listed twice for topic {qid}"
            )
        run[qid][docno] = score
    return run


def ranking_order(scores: Mapping[str, float]) -> list[str]:
    """Docnos by score descending, ties by docno descending (trec_eval 9.0)."""
    return [
        d
        for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    ]


def topic_key(qid: str) -> tuple[int, float, str]:
    """Numeric order for numeric topic ids (as the script sorts), text order otherwise."""
    try:
        return (0, float(qid), qid)
    except ValueError:
        return (1, 0.0, qid)
