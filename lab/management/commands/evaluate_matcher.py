"""``manage.py evaluate_matcher``: the matcher's scores against people's nugget matches."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from lab.services.matcher_evaluation import (
    SEMANTIC_WEIGHTS,
    evaluation_load,
    evaluation_run,
    file_cached_embed,
    report_write,
)
from nuggets_app.learning import embeddings
from nuggets_app.learning.semantic import DEFAULT_MAX_WORDS
from nuggets_app.management.commands._base import check_paths

LEVELS = {"sentence": "update_id", "document": "docno"}


class Command(BaseCommand):
    help = (
        "Score every (unit, nugget) pair of a topic with min-span (each --k and --lam) "
        "and nugget-BM25 (and, with the semantic extra installed, the semantic "
        "scorer and its combinations with min-span), and measure them against human matches: precision, recall "
        "and F1 per threshold, AP, best-F1 threshold, per nugget grade, with misses "
        "and false matches listed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--nuggets", required=True, help="nugget file (any format)")
        parser.add_argument("--units", required=True, help="JSONL of units with text")
        parser.add_argument("--gold", required=True, help="JSONL of human matches")
        parser.add_argument("--level", choices=sorted(LEVELS), default="sentence")
        parser.add_argument("--unit-field", help="unit id field (default by --level)")
        parser.add_argument("--qid-prefix", default="", help="only these topics")
        parser.add_argument("--k", type=int, nargs="+", default=[3])
        parser.add_argument("--lam", type=float, nargs="+", default=[0.5])
        parser.add_argument("--no-bm25", action="store_true")
        parser.add_argument("--examples", type=int, default=15)
        parser.add_argument(
            "--no-semantic",
            action="store_true",
            help="leave the semantic scorings out even with the extra installed",
        )
        parser.add_argument(
            "--weights",
            type=float,
            nargs="+",
            default=list(SEMANTIC_WEIGHTS),
            help="weights of min-span in the combined scorings",
        )
        parser.add_argument(
            "--max-words",
            type=int,
            default=DEFAULT_MAX_WORDS,
            help="words per semantic window (sentences packed; 0: one sentence each)",
        )
        parser.add_argument(
            "--embedding-cache",
            type=Path,
            help=".npz file keeping the embeddings between runs (optional)",
        )
        parser.add_argument("--title", default="")
        parser.add_argument(
            "--out", help="directory for report.json, report.md, pr.png"
        )

    def handle(self, *args, **options) -> None:
        check_paths(options["nuggets"], options["units"], options["gold"])
        data = evaluation_load(
            nuggets_path=options["nuggets"],
            units_path=options["units"],
            gold_path=options["gold"],
            unit_field=options["unit_field"] or LEVELS[options["level"]],
            qid_prefix=options["qid_prefix"],
        )
        embed = None
        if options["no_semantic"]:
            self.stderr.write("semantic evidence: off (--no-semantic)")
        else:
            self.stderr.write(embeddings.semantic_status())
            if embeddings.semantic_available():
                embed = file_cached_embed(
                    embeddings.load_encoder().embed, options["embedding_cache"]
                )
        report = evaluation_run(
            data,
            ks=options["k"],
            lams=options["lam"],
            bm25=not options["no_bm25"],
            examples=options["examples"],
            embed=embed,
            weights=options["weights"],
            max_words=options["max_words"],
        )
        summary = {
            name: {
                level: {
                    key: result[level][key]
                    for key in ("average_precision", "best_f1", "best_threshold")
                }
                for level in ("pair", "unit")
            }
            for name, result in report["scorings"].items()
        }
        self.stdout.write(json.dumps({"gold": report["gold"], **summary}, indent=1))
        if options["out"]:
            title = options["title"] or f"matcher vs human matches ({options['level']})"
            for path in report_write(report, Path(options["out"]), title):
                self.stderr.write(f"wrote {path}")
