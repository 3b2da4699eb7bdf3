"""``manage.py evaluate_passages``: character-level measures of passage runs.

File mode::

    evaluate_passages --passage-qrels FILE (--docs FILE.jsonl | --collection NAME)
        [--qrels FILE] [--n 12000] [--beta 1] RUN [RUN ...]

Database mode (passage qrels from the nugget spans of a collection, judged documents
from its judgments)::

    evaluate_passages --collection NAME [--topics QID ...] RUN [RUN ...]

Passage qrels: ``qid docno start length`` (character offsets into the canonical text);
a line of length 0 marks a judged document without relevant text, and every document
of ``--qrels`` (TREC qrels) counts as judged. Passage runs:
``qid docno start length rank score tag``, ranked by score descending, then rank.
Document lengths (``--docs``: JSONL objects with ``docno`` and ``text`` or ``length``;
or the collection's documents) bound every span: a span past the end of its document
is an error naming the file and line. Output per run (``run<TAB>NAME`` first when
there are several): ``measure<TAB>topic<TAB>value`` for every topic of the qrels (a
topic the run does not answer scores 0), then ``all``: the mean over topics with
relevant text (sums for the character counts).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.selectors import qrels_resolve
from nuggets_app.inference.services.exports import passages_export
from nuggets_app.ir.passages import (
    DEFAULT_N,
    Passage,
    Span,
    articles_from_passages,
    hard_measures,
    inex_measures,
)
from nuggets_app.ir.prels import topic_key
from nuggets_app.management.commands.evaluate import format_value
from nuggets_app.models import Collection, Topic

GP_RANKS = (5, 10, 25, 50)
MEASURES = ("relevant_chars", "retrieved_chars", "char_P@min(N,R)", "char_Rprec",
            "char_bpref@R", "char_bpref@min(N,R)", "char_AP", "AgP", "AgP'",
            *(f"gP@{r}" for r in GP_RANKS))  # fmt: skip
SUMMED = frozenset({"relevant_chars", "retrieved_chars"})
Judged = dict[str, dict[str, list[Span]]]


@dataclass(frozen=True)
class PassageRun:
    name: str
    passages: dict[str, list[Passage]]


def _open(path: str):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        return opener(path, "rt", encoding="utf-8")
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None


def _records(path: str, columns: int, what: str) -> Iterator[tuple[int, list[str]]]:
    with _open(path) as handle:
        for number, line in enumerate(handle, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != columns:
                raise CommandError(
                    f"{path}:{number}: {what} needs {columns} columns, got {len(fields)}"
                )
            yield number, fields


def _span(path: str, number: int, fields: list[str], lengths: dict[str, int]) -> Span:
    _qid, docno, start, length = fields[:4]
    if not (start.isdigit() and length.isdigit()):
        raise CommandError(f"{path}:{number}: start and length must be integers >= 0")
    if docno not in lengths:
        raise CommandError(f"{path}:{number}: unknown document {docno}")
    begin, end = int(start), int(start) + int(length)
    if end > lengths[docno]:
        raise CommandError(
            f"{path}:{number}: span {begin}+{length} ends past the end of document "
            f"{docno} ({lengths[docno]} characters)"
        )
    return (begin, end)


def read_passage_qrels(path: str, lengths: dict[str, int]) -> Judged:
    """``qid -> {docno: relevant spans}``; zero-length lines mark judged documents."""
    judged: Judged = {}
    for number, fields in _records(path, 4, "a passage qrels line"):
        span = _span(path, number, fields, lengths)
        spans = judged.setdefault(fields[0], {}).setdefault(fields[1], [])
        if span[1] > span[0]:
            spans.append(span)
    return judged


def read_passage_run(path: str, lengths: dict[str, int]) -> PassageRun:
    """A passage run, each topic's passages by score descending, then rank."""
    rows: dict[str, list[tuple[float, int, int, Passage]]] = {}
    tag = Path(path).name
    for number, fields in _records(path, 7, "a passage run line"):
        begin, end = _span(path, number, fields, lengths)
        try:
            rank, score = int(fields[4]), float(fields[5])
        except ValueError:
            raise CommandError(
                f"{path}:{number}: rank or score is not a number"
            ) from None
        if not math.isfinite(score):
            raise CommandError(f"{path}:{number}: score is {fields[5]}")
        tag = fields[6]
        passage = Passage(fields[1], begin, end - begin)
        rows.setdefault(fields[0], []).append((-score, rank, number, passage))
    return PassageRun(tag, {q: [p for *_, p in sorted(r)] for q, r in rows.items()})


def read_doc_lengths(path: str) -> dict[str, int]:
    """``docno -> length in characters`` from JSONL (``text`` or ``length``)."""
    lengths: dict[str, int] = {}
    with _open(path) as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docno = str(row["docno"])
                size = int(row["length"]) if "length" in row else len(row["text"])
            except (ValueError, KeyError, TypeError) as error:
                raise CommandError(
                    f"{path}:{number}: expected JSON with docno and text or length "
                    f"({error})"
                ) from None
            lengths[docno] = size
    return lengths


def topic_values(
    passages: list[Passage], judged: dict[str, list[Span]], *, n: int, beta: float
) -> dict[str, float]:
    """Every measure of one topic."""
    hard = hard_measures(passages, judged, n=n)
    inex = inex_measures(articles_from_passages(passages), judged, beta=beta)
    values = [hard.relevant, hard.retrieved, hard.p_at_min_n_r, hard.r_precision,
              hard.bpref_at_r, hard.bpref_at_min_n_r, hard.char_ap, inex.agp,
              inex.agp_prime, *(inex.gp_at(r) for r in GP_RANKS)]  # fmt: skip
    return dict(zip(MEASURES, (float(v) for v in values), strict=True))


def evaluate_run(
    run: PassageRun, judged: Judged, *, n: int, beta: float
) -> Iterator[tuple[str, str, float]]:
    """``(measure, topic, value)`` per topic of the qrels, then ``all``."""
    per_topic = {
        qid: topic_values(run.passages.get(qid, []), judged[qid], n=n, beta=beta)
        for qid in sorted(judged, key=topic_key)
    }
    for qid, values in per_topic.items():
        for measure in MEASURES:
            yield measure, qid, values[measure]
    relevant = [v for v in per_topic.values() if v["relevant_chars"] > 0]
    for measure in MEASURES:
        column = [
            v[measure] for v in (per_topic.values() if measure in SUMMED else relevant)
        ]
        if measure in SUMMED:
            yield measure, "all", float(sum(column))
        else:
            defined = [x for x in column if not math.isnan(x)]
            yield measure, "all", sum(defined) / len(defined) if defined else math.nan


class Command(BaseCommand):
    help = (
        "Evaluate passage runs with the HARD character measures and the INEX "
        "in-context measures, against passage qrels from a file or from nugget spans."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("runs", nargs="+", metavar="RUN", help="passage run files")
        parser.add_argument("--passage-qrels", metavar="FILE")
        parser.add_argument("--qrels", metavar="FILE", help="judged documents (TREC)")
        parser.add_argument("--docs", metavar="FILE", help="JSONL document lengths")
        parser.add_argument(
            "--collection", help="document lengths (and qrels) from here"
        )
        parser.add_argument("--topics", nargs="+", metavar="QID", help="database mode")
        parser.add_argument("--n", type=int, default=DEFAULT_N, help="N of P@min(N,R)")
        parser.add_argument("--beta", type=float, default=1.0, help="beta of F")

    def handle(self, *args, **options) -> None:
        lengths, judged = self._inputs(options)
        if options["n"] < 1 or options["beta"] <= 0:
            raise CommandError("--n must be >= 1 and --beta > 0")
        runs = [read_passage_run(path, lengths) for path in options["runs"]]
        for run in runs:
            if len(runs) > 1:
                self.stdout.write(f"run\t{run.name}")
            rows = evaluate_run(run, judged, n=options["n"], beta=options["beta"])
            for measure, qid, value in rows:
                kind = "NumRel" if measure in SUMMED else measure
                self.stdout.write(f"{measure}\t{qid}\t{format_value(kind, value)}")

    def _inputs(self, options) -> tuple[dict[str, int], Judged]:
        collection = None
        if options["collection"]:
            collection = Collection.objects.filter(name=options["collection"]).first()
            if collection is None:
                raise CommandError(f"no collection {options['collection']!r}")
            lengths = dict(collection.documents.values_list("docno", "length_chars"))
        elif options["docs"]:
            lengths = read_doc_lengths(options["docs"])
        else:
            raise CommandError(
                "give --docs FILE or --collection NAME (document lengths)"
            )
        if options["passage_qrels"]:
            judged = read_passage_qrels(options["passage_qrels"], lengths)
        elif collection is not None:
            judged = self._from_nuggets(collection, options["topics"], lengths)
        else:
            raise CommandError("give --passage-qrels FILE, or --collection NAME")
        if options["qrels"]:
            for _, fields in _records(options["qrels"], 4, "a qrels line"):
                judged.setdefault(fields[0], {}).setdefault(fields[2], [])
        if options["topics"]:
            judged = {q: d for q, d in judged.items() if q in set(options["topics"])}
        if not judged:
            raise CommandError("the passage qrels hold no topic")
        return lengths, judged

    @staticmethod
    def _from_nuggets(collection: Collection, qids, lengths) -> Judged:
        topics = Topic.objects.filter(collection=collection)
        if qids:
            topics = topics.filter(qid__in=qids)
        judged: Judged = {}
        for qid, docs in qrels_resolve(collection=collection, key="human").items():
            for docno in docs:
                judged.setdefault(qid, {}).setdefault(docno, [])
        source = f"{collection.name} nuggets"
        for number, line in enumerate(
            passages_export(collection=collection, topics=topics).lines, 1
        ):
            fields = line.split()
            span = _span(source, number, fields, lengths)
            judged.setdefault(fields[0], {}).setdefault(fields[1], []).append(span)
        return judged
