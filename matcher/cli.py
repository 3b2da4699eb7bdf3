"""``python -m matcher``: ``score`` (the CLI contract of ``matcher.io``) and ``bench``.

Exit status 0 on success, 2 on bad input or a bad option, with exactly one
line on stderr (``FILE:LINE: problem`` for files).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from .io import (
    Pair,
    encode_string,
    format_result_json,
    iter_documents,
    read_nuggets,
    read_pairs,
)
from .options import STEMMERS, STOPWORD_LISTS, MatcherError, MatchOptions
from .score import NO_MATCH, TopicMatcher
from .tokens import PreparedText, stems_save

EXIT_BAD_INPUT = 2
WRITE_EVERY = 4096


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error, so every bad input reads the same way."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m matcher``."""
    parser = _Parser(prog="python -m matcher", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser
    )
    score = commands.add_parser("score", help="score documents against topic nuggets")
    score.add_argument("--nuggets", required=True, metavar="NUGGETS.jsonl")
    score.add_argument("--docs", required=True, metavar="DOCS.jsonl")
    _add_match_options(score)
    score.add_argument("--pairs", metavar="PAIRS", help="lines 'topic docno' to score")
    bench = commands.add_parser("bench", help="measure throughput on one core")
    bench.add_argument(
        "--docs", metavar="FILE", nargs="+", help="JSONL documents (.gz accepted)"
    )
    bench.add_argument(
        "--cold",
        action="store_true",
        help="time `python -m matcher score` in fresh processes (default documents: "
        "every classic collection of ../shared/data)",
    )
    bench.add_argument("--nuggets-per-topic", type=int, default=100, metavar="N")
    bench.add_argument(
        "--topics", type=int, default=None, metavar="N", help="default 5 (--cold: 1)"
    )
    bench.add_argument("--baseline-docs", type=int, default=100, metavar="N")
    bench.add_argument("--rounds", type=int, default=3, metavar="N")
    bench.add_argument("--seed", type=int, default=13)
    _add_match_options(bench)
    return parser


def _add_match_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--k", type=int, default=3, help="shingle size (default 3)")
    parser.add_argument("--lam", type=float, default=0.5, help="decay (default 0.5)")
    parser.add_argument("--stem", choices=STEMMERS, default="porter")
    parser.add_argument("--stopwords", choices=STOPWORD_LISTS, default="default")


def options_from(args: argparse.Namespace) -> MatchOptions:
    """Validated match options from the command line."""
    try:
        return MatchOptions(
            k=args.k, lam=args.lam, stem=args.stem, stopwords=args.stopwords
        )
    except MatcherError as exc:
        raise MatcherError(f"python -m matcher: error: --{exc}") from None


def score_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> None:
    """Score every (topic, document) pair; inputs are validated before output."""
    options = options_from(args)
    topics = read_nuggets(args.nuggets)
    pairs = read_pairs(args.pairs) if args.pairs else None
    matchers = {topic: TopicMatcher(specs, options) for topic, specs in topics.items()}
    if pairs is not None:
        _warn_unknown_topics(args.pairs, pairs, matchers, err)
    topic_json = {topic: encode_string(topic) for topic in matchers}
    every_topic = tuple(matchers)
    lines: list[str] = []
    try:
        for document in iter_documents(args.docs):
            if pairs is None:
                wanted: Sequence[str] = every_topic
            else:
                found = pairs.pop(document.docno, None)
                if not found:
                    continue
                wanted = [pair.topic for pair in found]
            prepared = PreparedText(document.text, options)
            docno_json = encode_string(document.docno)
            for topic in wanted:
                matcher = matchers.get(topic)
                match = matcher.score_prepared(prepared) if matcher else NO_MATCH
                lines.append(
                    format_result_json(
                        topic_json.get(topic) or encode_string(topic), docno_json, match
                    )
                )
            if len(lines) >= WRITE_EVERY:
                _write_lines(out, lines)
    finally:
        # Results of the documents before a bad line are written (streaming).
        _write_lines(out, lines)
    stems_save()
    if pairs:
        first = min(
            (p for found in pairs.values() for p in found), key=lambda p: p.line
        )
        raise MatcherError(
            f"{args.pairs}:{first.line}: document {first.docno} not found in {args.docs}"
        )


def _write_lines(out: TextIO, lines: list[str]) -> None:
    # One write per few thousand results: a write per line costs more than the
    # formatting on fast documents.
    if lines:
        lines.append("")
        out.write("\n".join(lines))
        lines.clear()


def _warn_unknown_topics(
    path: str,
    pairs: dict[str, list[Pair]],
    matchers: dict[str, TopicMatcher],
    err: TextIO,
) -> None:
    reported: set[str] = set()
    for found in pairs.values():
        for pair in found:
            if pair.topic not in matchers and pair.topic not in reported:
                reported.add(pair.topic)
                err.write(
                    f"{path}:{pair.line}: warning: topic {pair.topic} has no nuggets; "
                    "its pairs score 0\n"
                )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m matcher``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "score":
            score_command(args, sys.stdout, sys.stderr)
        else:
            from .bench import bench_command

            bench_command(args, sys.stdout)
        sys.stdout.flush()
    except MatcherError as exc:
        sys.stdout.flush()
        print(exc, file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do;
        # stdout is pointed at /dev/null so the exit-time flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0
