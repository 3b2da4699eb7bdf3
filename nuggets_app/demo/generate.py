"""Generate the demo dataset: invented topics, short documents and runs of mixed quality.

Deterministic for a seed; the generated files are committed, so the demo never
generates anything at run time::

    python -m nuggets_app.demo.generate            # rewrites nuggets_app/demo/data/
    python -m nuggets_app.demo.generate --out DIR  # anywhere else

Output: ``docs.jsonl`` (``{"docno","title","text"}``, or ``{"docno","html"}`` for about
one document in eight, with a script and a style block the importer must drop),
``topics.jsonl`` (``qid``, ``title``, ``description``, ``narrative``, ``aspects``),
``qrels.txt`` (the generator's ground truth: 2 = about the topic, 1 = touches it,
0 = names it in passing) and ``runs/*.run`` (six TREC runs, depth 50: BM25, TF-IDF and
weaker, noisier systems).
"""

from __future__ import annotations

import argparse
import html
import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nuggets_app.demo.subjects import DISTRACTORS, FILLER, SLOTS, SUBJECTS, Subject

DEFAULT_SEED = 20240611
DATA_DIR = Path(__file__).resolve().parent / "data"
RUN_DEPTH = 50
HTML_SHARE = 0.125
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "find",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "information",
        "is",
        "it",
        "its",
        "known",
        "of",
        "on",
        "or",
        "report",
        "reports",
        "say",
        "the",
        "their",
        "this",
        "to",
        "was",
        "what",
        "which",
        "with",
    ]
)


@dataclass
class DemoDocument:
    title: str
    sentences: list[str]
    grades: dict[str, int] = field(default_factory=dict)
    docno: str = ""
    as_html: bool = False

    @property
    def text(self) -> str:
        half = max(1, len(self.sentences) // 2)
        return (
            " ".join(self.sentences[:half]) + "\n\n" + " ".join(self.sentences[half:])
        )


def fill(template: str, rng: random.Random) -> str:
    """A template with its ``{slots}`` filled from ``SLOTS``."""
    values = {slot: rng.choice(options) for slot, options in SLOTS.items()}
    return template.format(**values)


def _distractor_sentences(rng: random.Random, count: int) -> list[str]:
    themes = rng.sample(sorted(DISTRACTORS), 2)
    pool = [s for theme in themes for s in DISTRACTORS[theme]] + FILLER
    return [fill(s, rng) for s in rng.sample(pool, count)]


def _about(subject: Subject, rng: random.Random) -> DemoDocument:
    aspects = rng.sample(sorted(subject.aspects), 2)
    sentences = [fill(rng.choice(subject.core), rng)]
    for aspect in aspects:
        sentences += [fill(s, rng) for s in rng.sample(subject.aspects[aspect][1], 2)]
    if rng.random() < 0.5:
        sentences.append(fill(rng.choice(FILLER), rng))
    return DemoDocument(fill(rng.choice(subject.headlines), rng), sentences)


def _touching(subject: Subject, rng: random.Random) -> DemoDocument:
    aspect = rng.choice(sorted(subject.aspects))
    sentences = _distractor_sentences(rng, 3)
    sentences.insert(
        rng.randrange(1, 4), fill(rng.choice(subject.aspects[aspect][1]), rng)
    )
    return DemoDocument("Around the county this week", sentences)


def _naming(subject: Subject, rng: random.Random) -> DemoDocument:
    sentences = _distractor_sentences(rng, 4)
    sentences.insert(rng.randrange(0, 5), fill(rng.choice(subject.mentions), rng))
    return DemoDocument("Local news in brief", sentences)


GRADE_BUILDERS: dict[int, Callable[[Subject, random.Random], DemoDocument]] = {
    2: _about,
    1: _touching,
    0: _naming,
}


def make_document(
    subject: Subject | None, grade: int, rng: random.Random
) -> DemoDocument:
    """One document of the demo's model: about ``subject`` (grade 2), touching it (1),
    naming it in passing (0), or, without a subject, a distractor. Larger generated
    collections (the scale benchmark) draw every document from here."""
    if subject is None:
        sentences = _distractor_sentences(rng, rng.randint(4, 6))
        return DemoDocument(sentences[0].rstrip("."), sentences[1:])
    document = GRADE_BUILDERS[grade](subject, rng)
    document.grades[subject.qid] = grade
    return document


def make_documents(rng: random.Random) -> list[DemoDocument]:
    """About 300 documents: per subject 14 about it, 10 touching it, 6 naming it;
    then 120 distractors. Docnos are given after a shuffle, so they reveal nothing."""
    documents: list[DemoDocument] = []
    for subject in SUBJECTS:
        for count, grade in ((14, 2), (10, 1), (6, 0)):
            documents += [make_document(subject, grade, rng) for _ in range(count)]
    documents += [make_document(None, 0, rng) for _ in range(120)]
    rng.shuffle(documents)
    for number, document in enumerate(documents, start=1):
        document.docno = f"demo-{number:03d}"
        document.as_html = rng.random() < HTML_SHARE
    return documents


def tokens(text: str) -> list[str]:
    """Lower-cased words without stopwords (the runs' only analysis)."""
    return [w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in STOPWORDS]


class Index:
    """Term statistics of the demo documents, for the runs' scoring functions."""

    def __init__(self, documents: Sequence[DemoDocument]) -> None:
        self.docnos = [d.docno for d in documents]
        self.terms = [Counter(tokens(d.title + " " + d.text)) for d in documents]
        self.lengths = [sum(t.values()) for t in self.terms]
        self.mean_length = sum(self.lengths) / len(self.lengths)
        self.df = Counter(term for t in self.terms for term in t)

    def idf(self, term: str) -> float:
        n, df = len(self.docnos), self.df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def bm25(self, query: list[str], k1: float = 1.2, b: float = 0.75) -> list[float]:
        scores = []
        for terms, length in zip(self.terms, self.lengths, strict=True):
            norm = k1 * (1 - b + b * length / self.mean_length)
            scores.append(
                sum(
                    self.idf(q) * terms[q] * (k1 + 1) / (terms[q] + norm) for q in query
                )
            )
        return scores

    def tfidf(self, query: list[str]) -> list[float]:
        scores = []
        for terms, length in zip(self.terms, self.lengths, strict=True):
            weight = sum(
                (1 + math.log(terms[q])) * self.idf(q) for q in query if terms[q]
            )
            scores.append(weight / math.sqrt(max(length, 1)))
        return scores

    def coordination(self, query: list[str]) -> list[float]:
        return [float(sum(1 for q in set(query) if terms[q])) for terms in self.terms]


Scorer = Callable[[Index, Subject, random.Random], list[float]]


def _noisy(scores: list[float], rng: random.Random, sd: float) -> list[float]:
    return [s + rng.gauss(0.0, sd) for s in scores]


RUNS: dict[str, Scorer] = {
    "demo-bm25-title": lambda ix, s, rng: ix.bm25(tokens(s.title)),
    "demo-bm25-desc": lambda ix, s, rng: ix.bm25(tokens(s.title + " " + s.description)),
    "demo-tfidf": lambda ix, s, rng: ix.tfidf(tokens(s.title + " " + s.description)),
    "demo-bm25-noisy": lambda ix, s, rng: _noisy(ix.bm25(tokens(s.title)), rng, 3.0),
    "demo-coord": lambda ix, s, rng: _noisy(ix.coordination(tokens(s.title)), rng, 0.6),
    "demo-one-term": lambda ix, s, rng: _noisy(
        ix.bm25(sorted(tokens(s.title), key=lambda t: ix.df[t])[-1:]), rng, 1.0
    ),
}


def run_lines(index: Index, name: str, rng: random.Random) -> list[str]:
    """One run's TREC lines, depth ``RUN_DEPTH``, ranks in trec_eval order."""
    lines = []
    for subject in SUBJECTS:
        scores = [round(s, 4) for s in RUNS[name](index, subject, rng)]
        # trec_eval order: score descending, then docno descending.
        ranked = sorted(zip(scores, index.docnos, strict=True), reverse=True)
        lines += [
            f"{subject.qid} Q0 {docno} {rank} {score:.4f} {name}"
            for rank, (score, docno) in enumerate(ranked[:RUN_DEPTH], start=1)
        ]
    return lines


def _html(document: DemoDocument) -> str:
    paragraphs = document.text.split("\n\n")
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{html.escape(document.title)}</title>"
        "<style>p { color: #333; }</style>"
        "<script>document.title = 'never shown';</script></head>"
        f"<body><h1>{html.escape(document.title)}</h1>{body}"
        "<ul><li>Printed edition, page 4</li></ul></body></html>"
    )


def _document_record(document: DemoDocument) -> dict[str, str]:
    if document.as_html:
        return {"docno": document.docno, "html": _html(document)}
    return {"docno": document.docno, "title": document.title, "text": document.text}


def _topic_record(subject: Subject) -> dict:
    return {
        "qid": subject.qid,
        "title": subject.title,
        "description": subject.description,
        "narrative": subject.narrative,
        "aspects": [
            {"id": key, "text": text} for key, (text, _) in subject.aspects.items()
        ],
    }


def write_dataset(out: Path, seed: int = DEFAULT_SEED) -> dict[str, int]:
    """Write the whole dataset into ``out``; returns counts of what was written."""
    rng = random.Random(seed)
    documents = make_documents(rng)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    with open(out / "docs.jsonl", "w", encoding="utf-8") as handle:
        for document in sorted(documents, key=lambda d: d.docno):
            handle.write(json.dumps(_document_record(document)) + "\n")
    with open(out / "topics.jsonl", "w", encoding="utf-8") as handle:
        for subject in SUBJECTS:
            handle.write(json.dumps(_topic_record(subject)) + "\n")
    qrels = [
        f"{subject.qid} 0 {d.docno} {d.grades[subject.qid]}"
        for subject in SUBJECTS
        for d in sorted(documents, key=lambda d: d.docno)
        if subject.qid in d.grades
    ]
    (out / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    index = Index(documents)
    for name in RUNS:
        lines = run_lines(index, name, random.Random(f"{seed}:{name}"))
        (out / "runs" / f"{name}.run").write_text(
            "\n".join(lines) + "\n", encoding="utf-8"
        )
    return {
        "documents": len(documents),
        "html": sum(d.as_html for d in documents),
        "topics": len(SUBJECTS),
        "qrels": len(qrels),
        "runs": len(RUNS),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    counts = write_dataset(args.out, args.seed)
    print(", ".join(f"{value} {key}" for key, value in counts.items()), "->", args.out)


if __name__ == "__main__":
    main()
