"""The inputs and output lines of the evaluation commands (``evaluate``, ``statap``,
``compare_qrels``, ``evaluate_passages``).

Runs, qrels, prels and probabilistic qrels come from files, parsed by the importers, or
from the database, read as the evaluation pages read them; the results go out as
``measure<TAB>topic<TAB>value`` lines. Bad input raises :class:`InputError` whose message
is ``FILE:LINE: problem`` (or names the missing object); the commands print it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.selectors import (
    SourceError,
    job_probability_qrels,
)
from nuggets_app.evaluation.selectors import run_scores as stored_run_scores
from nuggets_app.evaluation.services.new_runs import NEW_RUN_COUNTS
from nuggets_app.importers.errors import ImportFormatError, escape_path
from nuggets_app.importers.qrels import (
    parse_qrels,
    subtopic_qrels_read,
)
from nuggets_app.importers.runs import parse_run
from nuggets_app.inference.services.exports import ExportError
from nuggets_app.inference.services.graded import job_expected_gains
from nuggets_app.ir.prels import (
    PLACEHOLDER_REL,
    PrelsRecord,
    StatapInputError,
    TopicPrels,
    prels_load,
)
from nuggets_app.ir.prels import run_scores as contiguous_run_scores
from nuggets_app.models import MatchJob, Qrels, QrelsEntry, Run

INTEGER_MEASURES = frozenset(
    {
        "valid_topics",
        "NumQ",
        "NumRel",
        "NumRet",
        "NumRelRet",
        "ma_topics",
        "ma_model_only",
        "bias_flag",
        "docs_model_alone",
        "top_up_topics",
    }
    | set(NEW_RUN_COUNTS)
)

RunScores = dict[str, dict[str, float]]
T = TypeVar("T")


class InputError(DomainError):
    """An input the evaluation cannot read: a bad file line or a missing object."""


@dataclass(frozen=True)
class NamedRun:
    """A run's name (its tag, or its name in the database) and its scores."""

    name: str
    scores: RunScores


def file_check(path: str) -> None:
    """An :class:`InputError` for a path that does not exist, worded as every
    command words it (the importers' ``check_paths``)."""
    if not os.path.exists(path):
        raise InputError(f"{escape_path(path)}: no such file or directory")


def input_errors(action: Callable[[], T], *paths: str) -> T:
    """Run ``action()`` on the files ``paths``, turning a missing file or a bad one
    into an :class:`InputError`."""
    for path in paths:
        file_check(path)
    try:
        return action()
    except (ImportFormatError, StatapInputError) as error:
        raise InputError(str(error)) from None
    except OSError as error:
        raise InputError(f"{error.filename}: {error.strerror}") from None


def read_run_file(path: str, *, contiguous: bool = False) -> NamedRun:
    """A TREC run file; ``contiguous`` also rejects topics split over several blocks."""

    def read() -> NamedRun:
        lines = list(parse_run(path))
        if contiguous:
            scores = contiguous_run_scores(
                ((x.line, x.qid, x.docno, x.score) for x in lines), source=path
            )
        else:
            scores = {}
            for x in lines:
                scores.setdefault(x.qid, {})[x.docno] = x.score
        return NamedRun(lines[0].tag, scores)

    return input_errors(read, path)


def read_qrels_file(path: str) -> dict[str, dict[str, int]]:
    """TREC qrels (or prels, relevance only; placeholder rows dropped)."""

    def read() -> dict[str, dict[str, int]]:
        qrels: dict[str, dict[str, int]] = {}
        for record in parse_qrels(path, kind="auto"):
            if record.rel != PLACEHOLDER_REL:
                qrels.setdefault(record.qid, {})[record.docno] = record.rel
        return qrels

    return input_errors(read, path)


def read_subtopic_qrels_file(path: str) -> dict[str, dict[str, dict[str, int]]]:
    """Subtopic (diversity) qrels ``qid subtopic docno rel``."""
    return input_errors(
        lambda: subtopic_qrels_read(parse_qrels(path, "subtopics")), path
    )


def read_expected_file(path: str) -> dict[str, dict[str, float]]:
    """Probabilistic qrels (``qid docno rel p pi source``) as ``qid -> {docno: p}``."""

    def read() -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for record in parse_qrels(path, kind="prob"):
            out.setdefault(record.qid, {})[record.docno] = float(
                record.probability or 0.0
            )
        return out

    return input_errors(read, path)


def read_prels_file(path: str, *, sampled_only: bool = False) -> dict[str, TopicPrels]:
    """prels for statAP (``sampled_only`` is the NIST script's ``-f``)."""
    return input_errors(
        lambda: prels_load(
            parse_qrels(path, kind="prels"), source=path, sampled_only=sampled_only
        ),
        path,
    )


def job_expected(
    job_id: int, *, graded: bool = False
) -> tuple[MatchJob, dict[str, dict[str, float]]]:
    """A job and its probabilistic qrels (its model's p, human judgments overriding),
    or with ``graded`` its expected gains (the ordinal model's expected grades)."""
    job = MatchJob.objects.select_related("collection").filter(pk=job_id).first()
    if job is None:
        raise InputError(f"no matching job {job_id}")
    try:
        if graded:
            return job, job_expected_gains(job)
        return job, job_probability_qrels(job)
    except ExportError as error:
        raise InputError(str(error)) from None
    except SourceError as error:
        raise InputError(f"{error} (fit its relevance model first)") from None


def find_qrels(collection: str, name: str) -> Qrels:
    """The stored qrels of that name in that collection."""
    try:
        return Qrels.objects.get(collection__name=collection, name=name)
    except Qrels.DoesNotExist:
        raise InputError(f"no qrels {name!r} in collection {collection!r}") from None


def db_prels(qrels: Qrels, *, sampled_only: bool = False) -> dict[str, TopicPrels]:
    """Stored prels loaded for statAP, topics kept contiguous."""
    rows = (
        QrelsEntry.objects.filter(qrels=qrels)
        .order_by("topic__qid", "id")
        .values_list(
            "topic__qid", "document__docno", "relevance", "method", "inclusion_prob"
        )
    )
    records = (
        PrelsRecord(number, qid, docno, rel, method, prob)
        for number, (qid, docno, rel, method, prob) in enumerate(rows.iterator(), 1)
    )
    source = f"{qrels.collection.name}/{qrels.name}"
    return input_errors(
        lambda: prels_load(records, source=source, sampled_only=sampled_only)
    )


def db_runs(collection: str, names: Iterable[str] | None) -> list[NamedRun]:
    """Stored runs by name (all runs of the collection when ``names`` is None)."""
    runs = Run.objects.filter(collection__name=collection).order_by("name")
    if names is not None:
        wanted = list(names)
        runs = runs.filter(name__in=wanted)
        missing = sorted(set(wanted) - set(runs.values_list("name", flat=True)))
        if missing:
            raise InputError(
                f"no run {', '.join(missing)} in collection {collection!r}"
            )
    return [NamedRun(run.name, stored_run_scores(run)) for run in runs]


def format_value(measure: str, value: float) -> str:
    """Full precision (``repr``), ``NaN`` for undefined, integers for counts."""
    if math.isnan(value):
        return "NaN"
    if measure in INTEGER_MEASURES:
        return str(int(value))
    return repr(float(value))


def format_rows(rows: Iterable[tuple[str, str, float]]) -> Iterator[str]:
    """``measure<TAB>topic<TAB>value`` lines."""
    for measure, topic, value in rows:
        yield f"{measure}\t{topic}\t{format_value(measure, value)}"
