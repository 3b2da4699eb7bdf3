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

import math
from collections.abc import Iterator
from functools import partial

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.evaluation.selectors import qrels_resolve
from nuggets_app.evaluation.services.inputs import format_value, input_errors
from nuggets_app.importers.passages import (
    Judged,
    PassageRun,
    passage_qrels_lines,
    read_doc_lengths,
    read_passage_qrels,
    read_passage_run,
)
from nuggets_app.importers.qrels import parse_qrels
from nuggets_app.inference.services.exports import passages_export
from nuggets_app.ir.passages import (
    DEFAULT_N,
    Passage,
    articles_from_passages,
    hard_measures,
    inex_measures,
)
from nuggets_app.ir.prels import topic_key
from nuggets_app.ir.spans import Span
from nuggets_app.management.commands._base import input_errors as command_errors
from nuggets_app.models import Collection, Topic

GP_RANKS = (5, 10, 25, 50)
MEASURES = (
    "relevant_chars",
    "retrieved_chars",
    "char_P@min(N,R)",
    "char_Rprec",
    "char_bpref@R",
    "char_bpref@min(N,R)",
    "char_AP",
    "AgP",
    "AgP'",
    *(f"gP@{r}" for r in GP_RANKS),
)
SUMMED = frozenset({"relevant_chars", "retrieved_chars"})


def topic_values(
    passages: list[Passage], judged: dict[str, list[Span]], *, n: int, beta: float
) -> dict[str, float]:
    """Every measure of one topic."""
    hard = hard_measures(passages, judged, n=n)
    inex = inex_measures(articles_from_passages(passages), judged, beta=beta)
    values = [
        hard.relevant,
        hard.retrieved,
        hard.p_at_min_n_r,
        hard.r_precision,
        hard.bpref_at_r,
        hard.bpref_at_min_n_r,
        hard.char_ap,
        inex.agp,
        inex.agp_prime,
        *(inex.gp_at(r) for r in GP_RANKS),
    ]
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
        with command_errors():
            lengths, judged = self._inputs(options)
            if options["n"] < 1 or options["beta"] <= 0:
                raise CommandError("--n must be >= 1 and --beta > 0")
            runs = [
                input_errors(partial(read_passage_run, path, lengths))
                for path in options["runs"]
            ]
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
            lengths = input_errors(lambda: read_doc_lengths(options["docs"]))
        else:
            raise CommandError(
                "give --docs FILE or --collection NAME (document lengths)"
            )
        if options["passage_qrels"]:
            judged = input_errors(
                lambda: read_passage_qrels(options["passage_qrels"], lengths)
            )
        elif collection is not None:
            judged = self._from_nuggets(collection, options["topics"], lengths)
        else:
            raise CommandError("give --passage-qrels FILE, or --collection NAME")
        if options["qrels"]:
            records = input_errors(lambda: list(parse_qrels(options["qrels"], "qrels")))
            for record in records:
                judged.setdefault(record.qid, {}).setdefault(record.docno, [])
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
        lines = passages_export(collection=collection, topics=topics).lines
        spans = input_errors(
            lambda: passage_qrels_lines(
                lines, lengths, source=f"{collection.name} nuggets"
            )
        )
        for qid, spans_by_doc in spans.items():
            for docno, found in spans_by_doc.items():
                judged.setdefault(qid, {}).setdefault(docno, []).extend(found)
        return judged
