"""``python -m matcher bench``: matcher throughput on one core, with ratios.

Reports, in one run: end-to-end scoring (tokenize, stem, match, spans) with
realistic nuggets taken from the documents' own sentences; bare regex
tokenization of the same text (the floor any Python implementation pays);
a straightforward implementation (per shingle, a scan of every window) on a
subset; and re-scoring stored evidence for a new lambda.

With ``--cold`` it times ``python -m matcher score`` from a cold start instead:
fresh processes reading the files (startup, imports, parsing, stemming and
output included), first with the persistent stem table off (every term stemmed
by NLTK in the process), then with an empty table (filling it), then with the
table filled, against bare regex tokenization of the same text in this process.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TextIO

from .io import iter_documents
from .options import MatcherError, MatchOptions
from .score import NuggetSpec, TopicMatcher
from .shingles import nugget_shingles
from .stems import stem_table_path
from .tokens import TOKEN_RE, PreparedText, default_stopwords

_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+")
_COLLECTIONS = ("cranfield", "npl-vaswani")
# The classic collections of ../shared/data: the cold-start benchmark's default text.
_CLASSIC = ("adi", "cacm", "cisi", "cranfield", "lisa", "medline", "npl-vaswani")
RESCORE_DOCS = 100_000


def _shared_data() -> Path:
    return Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def classic_docs() -> list[Path]:
    """Every classic collection's documents beside the repository, if present."""
    paths = [_shared_data() / name / "docs.jsonl.gz" for name in _CLASSIC]
    return [path for path in paths if path.is_file()]


def default_docs() -> Path | None:
    """A real collection beside the repository (``../shared/data``), if present."""
    data = _shared_data()
    for name in _COLLECTIONS:
        path = data / name / "docs.jsonl.gz"
        if path.is_file():
            return path
    return None


def generated_docs(count: int = 2000, seed: int = 13) -> list[str]:
    """Zipf-like synthetic English-looking text, when no collection is at hand."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "tra", "vis", "por", "den", "sul", "ex"]
    vocabulary = [
        "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
        for _ in range(5000)
    ]
    weights = [1 / rank for rank in range(1, len(vocabulary) + 1)]
    docs = []
    for _ in range(count):
        words = rng.choices(vocabulary, weights, k=rng.randint(60, 300))
        sentences = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
        docs.append(". ".join(sentences) + ".")
    return docs


def make_nuggets(
    docs: Sequence[str], count: int, rng: random.Random
) -> list[NuggetSpec]:
    """Nuggets cut from sentences of the documents: 5 to 15 words each."""
    nuggets: list[NuggetSpec] = []
    while len(nuggets) < count:
        sentences = _SENTENCE_RE.split(rng.choice(docs))
        words = rng.choice(sentences).split()
        if len(words) < 5:
            continue
        size = rng.randint(5, min(15, len(words)))
        start = rng.randint(0, len(words) - size)
        nuggets.append(
            NuggetSpec(f"n{len(nuggets) + 1}", " ".join(words[start : start + size]))
        )
    return nuggets


class Baseline:
    """The straightforward matcher: per shingle of every nugget, scan every window."""

    def __init__(self, nuggets: Sequence[NuggetSpec], options: MatchOptions) -> None:
        self.options = options
        stop = default_stopwords() if options.stopwords == "default" else frozenset()
        stemmer = None
        if options.stem == "porter":
            from nltk.stem.porter import PorterStemmer

            stemmer = PorterStemmer()
        self._stop = stop
        self._stem = lru_cache(maxsize=None)(stemmer.stem if stemmer else str)
        self.nuggets = []
        for spec in nuggets:
            shingles = nugget_shingles(self.terms(spec.text), options.k)
            if shingles:
                self.nuggets.append((spec.id, shingles))

    def terms(self, text: str) -> list[str]:
        """Processed terms of ``text``."""
        return [
            self._stem(m.group())
            for m in TOKEN_RE.finditer(text.casefold())
            if m.group() not in self._stop
        ]

    def score(self, text: str) -> float:
        """Document score: max over nuggets of the mean shingle score."""
        terms = self.terms(text)
        lam = self.options.lam
        best = 0.0
        for _, shingles in self.nuggets:
            total = 0.0
            for shingle in shingles:
                span = _every_window(terms, Counter(shingle))
                if span is not None:
                    total += lam ** ((span - len(shingle)) / len(shingle))
            best = max(best, total / len(shingles))
        return best


def _every_window(terms: Sequence[str], need: Counter[str]) -> int | None:
    best = None
    for i in range(len(terms)):
        if terms[i] not in need:
            continue
        have: Counter[str] = Counter()
        for j in range(i, len(terms)):
            have[terms[j]] += 1
            if all(have[w] >= c for w, c in need.items()):
                best = j - i + 1 if best is None else min(best, j - i + 1)
                break
    return best


def _timed(run: Callable[[], object], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def bench_command(args: argparse.Namespace, out: TextIO) -> None:
    """Run the benchmark and print its figures."""
    if args.topics is None:
        args.topics = 1 if args.cold else 5
    if min(args.nuggets_per_topic, args.topics, args.baseline_docs, args.rounds) < 1:
        raise MatcherError("python -m matcher bench: error: counts must be >= 1")
    options = MatchOptions(
        k=args.k, lam=args.lam, stem=args.stem, stopwords=args.stopwords
    )
    if args.cold:
        cold_command(args, options, out)
        return
    paths = [Path(p) for p in args.docs] if args.docs else [default_docs()]
    if paths[0] is None:
        docs, source = generated_docs(seed=args.seed), "generated text"
    else:
        docs = [
            d.text
            for path in paths
            for d in iter_documents(str(path))
            if path is not None and d.text.strip()
        ]
        source = ", ".join(str(path) for path in paths)
    rng = random.Random(args.seed)
    topics = [
        make_nuggets(docs, args.nuggets_per_topic, rng) for _ in range(args.topics)
    ]
    megabytes = sum(len(text.encode("utf-8")) for text in docs) / 1e6
    out.write(f"documents: {source}: {len(docs)} docs, {megabytes:.2f} MB of text\n")
    out.write(
        f"nuggets: {args.topics} topics x {args.nuggets_per_topic} cut from document "
        f"sentences; k={options.k} lam={options.lam} stem={options.stem} "
        f"stopwords={options.stopwords}; one thread, CPU time, best of {args.rounds} rounds\n"
    )
    matchers = [TopicMatcher(nuggets, options) for nuggets in topics]
    cold_s = _timed(lambda: [PreparedText(text, options) for text in docs])
    out.write(
        f"first pass (stems every new term once; stem table {stem_table_path() or 'off'}, "
        f"terms already there are read from it): {megabytes / cold_s:8.2f} MB/s\n"
    )
    # The loaded collection is the benchmark's own data: keep the garbage
    # collector from re-scanning it, as a streaming caller never holds it.
    gc.collect()
    gc.freeze()
    _report_throughput(out, docs, megabytes, matchers, args.rounds)
    _report_baseline(out, docs[: args.baseline_docs], topics[0], matchers[0], options)
    _report_rescore(out, docs, matchers[0])


def _report_throughput(
    out: TextIO,
    docs: list[str],
    megabytes: float,
    matchers: list[TopicMatcher],
    rounds: int,
) -> None:
    tokenize_s = match_s = float("inf")
    matched = 0
    for _ in range(rounds):
        # Interleaved rounds: both figures see the same machine load.
        tokenize_s = min(
            tokenize_s, _timed(lambda: [TOKEN_RE.findall(t) for t in docs])
        )
        start = time.process_time()
        matched = sum(1 for m in matchers for text in docs if m.score(text).score > 0)
        match_s = min(match_s, (time.process_time() - start) / len(matchers))
    match_mbs = megabytes / match_s
    token_mbs = megabytes / tokenize_s
    out.write(
        f"matcher end to end:  {len(docs) / match_s:9.0f} docs/s {match_mbs:8.2f} MB/s "
        f"({matched / (len(docs) * len(matchers)):.0%} of pairs score > 0)\n"
    )
    out.write(
        f"bare regex tokenize: {len(docs) / tokenize_s:9.0f} docs/s {token_mbs:8.2f} MB/s\n"
    )
    out.write(f"ratio matcher / bare tokenization: {match_mbs / token_mbs:.2f}\n")


def _report_baseline(
    out: TextIO,
    subset: list[str],
    nuggets: list[NuggetSpec],
    matcher: TopicMatcher,
    options: MatchOptions,
) -> None:
    baseline = Baseline(nuggets, options)
    base_scores: list[float] = []
    base_s = _timed(lambda: base_scores.extend(baseline.score(text) for text in subset))
    fast_scores: list[float] = []
    fast_s = _timed(
        lambda: fast_scores.extend(matcher.score(text).score for text in subset)
    )
    agree = all(
        abs(a - b) <= 1e-9 for a, b in zip(base_scores, fast_scores, strict=True)
    )
    out.write(
        f"straightforward matcher ({len(subset)} docs): {len(subset) / base_s:9.1f} docs/s; "
        f"this matcher {len(subset) / fast_s:.0f} docs/s on the same docs; "
        f"speed-up {base_s / fast_s:.0f}x; scores agree: {'yes' if agree else 'NO'}\n"
    )


def _report_rescore(out: TextIO, docs: list[str], matcher: TopicMatcher) -> None:
    stored = [matcher.score(text).evidence.to_json() for text in docs]
    stored = [stored[i % len(stored)] for i in range(RESCORE_DOCS)]
    rescorer = matcher.rescorer(0.7)
    elapsed = _timed(lambda: [rescorer(data) for data in stored], repeat=3)
    out.write(
        f"re-score stored evidence for a new lambda: {RESCORE_DOCS} docs in "
        f"{elapsed:.2f} s ({RESCORE_DOCS / elapsed:.0f} docs/s)\n"
    )


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _score_cold(
    workdir: Path, options: MatchOptions, table: str, output: Path
) -> tuple[float, float]:
    """CPU and wall-clock seconds of one ``python -m matcher score`` process over the
    bench files (its output written to a file)."""
    command = [
        sys.executable,
        "-m",
        "matcher",
        "score",
        "--nuggets",
        str(workdir / "nuggets.jsonl"),
        "--docs",
        str(workdir / "docs.jsonl"),
        "--k",
        str(options.k),
        "--lam",
        str(options.lam),
        "--stem",
        options.stem,
        "--stopwords",
        options.stopwords,
    ]
    env = {**os.environ, "MATCHER_STEM_TABLE": table}
    root = Path(__file__).resolve().parent.parent
    before, clock = _child_cpu(), time.perf_counter()
    with output.open("wb") as handle:
        done = subprocess.run(
            command,
            stdout=handle,
            stderr=subprocess.PIPE,
            env=env,
            cwd=root,
            check=False,
        )
    if done.returncode != 0:
        raise MatcherError(
            "python -m matcher bench: error: score failed: "
            + done.stderr.decode("utf-8", "replace").strip()
        )
    return _child_cpu() - before, time.perf_counter() - clock


def _wall_tokenize(docs: list[str], *, keep: bool) -> float:
    """Wall-clock seconds of bare regex tokenization of the texts, in memory: the
    token lists kept (what the matcher needs before any matching: the baseline of
    every ratio) or each dropped at once (a scan, the floor of any tokenizer)."""
    clock = time.perf_counter()
    if keep:
        kept = [TOKEN_RE.findall(text) for text in docs]
        del kept
    else:
        for text in docs:
            TOKEN_RE.findall(text)
    return time.perf_counter() - clock


def cold_command(args: argparse.Namespace, options: MatchOptions, out: TextIO) -> None:
    """``bench --cold``: the score command from a cold start, with ratios."""
    paths = [Path(p) for p in args.docs] if args.docs else classic_docs()
    if not paths:
        raise MatcherError(
            "python -m matcher bench: error: --cold needs --docs (no ../shared/data)"
        )
    with tempfile.TemporaryDirectory(prefix="matcher-cold-") as tmp:
        workdir = Path(tmp)
        docs: list[str] = []
        with (workdir / "docs.jsonl").open("w", encoding="utf-8") as handle:
            for index, path in enumerate(paths):
                for d in iter_documents(str(path)):
                    if d.text.strip():
                        docs.append(d.text)
                        record = {"docno": f"{index}/{d.docno}", "text": d.text}
                        handle.write(json.dumps(record) + "\n")
        rng = random.Random(args.seed)
        with (workdir / "nuggets.jsonl").open("w", encoding="utf-8") as handle:
            for topic in range(1, args.topics + 1):
                for spec in make_nuggets(docs, args.nuggets_per_topic, rng):
                    record = {"topic": f"t{topic}", "id": spec.id, "text": spec.text}
                    handle.write(json.dumps(record) + "\n")
        megabytes = sum(len(text.encode("utf-8")) for text in docs) / 1e6
        out.write(
            f"documents: {len(paths)} files, {len(docs)} docs, {megabytes:.2f} MB of "
            f"text; {args.topics} topics x {args.nuggets_per_topic} nuggets; "
            f"k={options.k} lam={options.lam} stem={options.stem}\n"
            "python -m matcher score in a fresh process, CPU time (startup, imports, "
            f"reading, stemming, output), best of {args.rounds} rounds\n"
        )
        table = str(workdir / "stems.sqlite3")
        work = megabytes * args.topics
        # Without a table, and filling an empty one, happen once per machine (the
        # table outlives the process); the filled table is every later start.
        off_s, _ = _score_cold(workdir, options, "off", workdir / "off.jsonl")
        fill_s, _ = _score_cold(workdir, options, table, workdir / "fill.jsonl")
        warm_s = warm_wall = tokenize_s = kept_wall = scan_wall = float("inf")
        for _ in range(args.rounds):
            cpu, wall = _score_cold(workdir, options, table, workdir / "warm.jsonl")
            warm_s, warm_wall = min(warm_s, cpu), min(warm_wall, wall)
            tokenize_s = min(
                tokenize_s, _timed(lambda: [TOKEN_RE.findall(t) for t in docs])
            )
            kept_wall = min(kept_wall, _wall_tokenize(docs, keep=True))
            scan_wall = min(scan_wall, _wall_tokenize(docs, keep=False))
        outputs = [
            (workdir / f"{n}.jsonl").read_bytes() for n in ("off", "fill", "warm")
        ]
        same = outputs[0] == outputs[1] == outputs[2]
        token_mbs = megabytes / tokenize_s
        for label, seconds in (
            ("no stem table (NLTK for every term)", off_s),
            ("empty stem table (first run, fills it)", fill_s),
            ("stem table filled (every later start)", warm_s),
        ):
            out.write(
                f"score, {label}: {seconds:6.2f} s, {work / seconds:6.2f} MB/s; "
                f"ratio to bare tokenization {work / seconds / token_mbs:.2f}\n"
            )
        score_mbs = work / warm_wall
        out.write(
            f"end to end, wall clock (the score command, filled table, from start to "
            f"exit, JSON in and out; bare tokenization in memory): score "
            f"{warm_wall:.2f} s, {score_mbs:.2f} MB/s; bare tokenization, token "
            f"lists kept {kept_wall:.2f} s, {megabytes / kept_wall:.2f} MB/s, ratio "
            f"{score_mbs / (megabytes / kept_wall):.2f}; scan only (lists dropped) "
            f"{scan_wall:.2f} s, {megabytes / scan_wall:.2f} MB/s, ratio "
            f"{score_mbs / (megabytes / scan_wall):.2f}\n"
            f"bare regex tokenize: {len(docs) / tokenize_s:9.0f} docs/s "
            f"{token_mbs:8.2f} MB/s\n"
            f"output identical in the three modes: {'yes' if same else 'NO'}\n"
        )
