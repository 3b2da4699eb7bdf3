"""The scale benchmark's synthetic test collection, written as the files a user imports.

``N`` documents of the demo generator's model (:func:`nuggets_app.demo.generate.make_document`):
about 30% are about one of the demo subjects (grade 2), touch it (1) or name it in
passing (0), the rest are distractors. ``T`` topics cycle through the subjects (topic
``t`` has the subject ``(t - 1) % 6``), each with nuggets filled from its subject's
aspect sentences. ``R`` runs of depth 1,000 rank, for every topic, the subject's
documents and as many others by the grade plus noise of the run's own spread. The grades
are kept in memory as the simulated assessor's truth.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nuggets_app.demo.generate import fill, make_document
from nuggets_app.demo.subjects import SUBJECTS

RUN_DEPTH = 1000
RELATED_SHARE = 0.3
# Of the documents related to a subject: about it, touching it, naming it (as the demo).
GRADE_SHARES = ((2, 14 / 30), (1, 10 / 30), (0, 6 / 30))
NO_SUBJECT = -1


@dataclass
class ScaleWorld:
    """Paths of the generated files and the truth the simulated assessor judges by."""

    docs: Path
    topics: Path
    nuggets: Path
    runs: list[Path]
    tag: str
    subject: np.ndarray  # per document: index into SUBJECTS, or NO_SUBJECT
    grade: np.ndarray  # per document: its grade for its subject's topics
    qids: list[str]
    run_entries: int

    def truth(self, qid: str, docno: str) -> int:
        """The grade of a document for a topic: its own for its subject's topics,
        else 0."""
        i = int(docno.rsplit("-", 1)[1])
        same = self.subject[i] == topic_subject(qid)
        return int(self.grade[i]) if same else 0


def docno_of(tag: str, i: int) -> str:
    """The docno of the ``i``-th generated document."""
    return f"{tag}-{i:07d}"


def topic_subject(qid: str) -> int:
    """The subject (index into ``SUBJECTS``) of topic ``qid``."""
    return (int(qid) - 1) % len(SUBJECTS)


def _document_kind(i: int, rng: random.Random) -> tuple[int, int]:
    """(subject, grade) of the ``i``-th document: the first ones give every subject
    at every grade (so that the smallest collections can be judged and fitted), the
    rest are drawn."""
    grades = [g for g, _ in GRADE_SHARES]
    if i < len(SUBJECTS) * len(grades):
        s, g = divmod(i, len(grades))
        return s, grades[g]
    if rng.random() >= RELATED_SHARE:
        return NO_SUBJECT, 0
    weights = [w for _, w in GRADE_SHARES]
    return rng.randrange(len(SUBJECTS)), rng.choices(grades, weights)[0]


def _write_documents(path: Path, docs: int, rng: random.Random, tag: str):
    subject = np.full(docs, NO_SUBJECT, dtype=np.int8)
    grade = np.zeros(docs, dtype=np.int8)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(docs):
            s, g = _document_kind(i, rng)
            subject[i], grade[i] = s, g
            document = make_document(None if s == NO_SUBJECT else SUBJECTS[s], g, rng)
            record = {
                "docno": docno_of(tag, i),
                "title": document.title,
                "text": document.text,
            }
            handle.write(json.dumps(record) + "\n")
    return subject, grade


def _write_topics(topics: Path, nuggets: Path, qids: list[str], rng: random.Random):
    with topics.open("w", encoding="utf-8") as t, nuggets.open("w") as n:
        for qid in qids:
            subject = SUBJECTS[topic_subject(qid)]
            record = {
                "qid": qid,
                "title": f"{subject.title} ({qid})",
                "description": subject.description,
                "narrative": subject.narrative,
                "aspects": [
                    {"id": key, "text": text}
                    for key, (text, _) in subject.aspects.items()
                ],
            }
            t.write(json.dumps(record) + "\n")
            for aspect, (_, templates) in subject.aspects.items():
                for template in templates:
                    nugget = {
                        "qid": qid,
                        "text": fill(template, rng),
                        "grade": 2,
                        "aspect": aspect,
                    }
                    n.write(json.dumps(nugget) + "\n")


def _write_runs(folder: Path, tag: str, subject, grade, qids, runs: int, seed):
    """Run files: per topic, the subject's documents and as many others, ranked by
    grade (others at -1) plus the run's noise; the top ``RUN_DEPTH``."""
    rng = np.random.default_rng(seed)
    n = len(subject)
    spreads = np.linspace(0.5, 3.0, runs)
    paths, entries = [], 0
    handles = []
    for r in range(runs):
        path = folder / f"scale-run-{r + 1:02d}.run"
        paths.append(path)
        handles.append(path.open("w", encoding="utf-8"))
    try:
        for qid in qids:
            related = np.flatnonzero(subject == topic_subject(qid))
            others = rng.choice(n, size=min(n, max(2 * RUN_DEPTH, len(related))))
            candidates = np.unique(np.concatenate([related, others]))
            base = np.where(
                subject[candidates] == topic_subject(qid), grade[candidates], -1
            ).astype(float)
            for r, handle in enumerate(handles):
                scores = base + rng.normal(0.0, spreads[r], len(candidates))
                depth = min(RUN_DEPTH, len(candidates))
                top = np.argpartition(-scores, depth - 1)[:depth]
                top = top[np.argsort(-scores[top], kind="stable")]
                handle.write(
                    "".join(
                        f"{qid} Q0 {docno_of(tag, candidates[i])} {rank} "
                        f"{scores[i]:.4f} scale-run-{r + 1:02d}\n"
                        for rank, i in enumerate(top, start=1)
                    )
                )
                entries += depth
    finally:
        for handle in handles:
            handle.close()
    return paths, entries


def scale_world_write(
    folder: Path, *, docs: int, topics: int, runs: int, seed: int = 57, tag: str = "S"
) -> ScaleWorld:
    """Write the documents, topics, nuggets and runs into ``folder``."""
    rng = random.Random(seed)
    qids = [str(t + 1) for t in range(topics)]
    docs_path = folder / "docs.jsonl"
    subject, grade = _write_documents(docs_path, docs, rng, tag)
    _write_topics(folder / "topics.jsonl", folder / "nuggets.jsonl", qids, rng)
    run_paths, entries = _write_runs(folder, tag, subject, grade, qids, runs, seed)
    return ScaleWorld(
        docs=docs_path,
        topics=folder / "topics.jsonl",
        nuggets=folder / "nuggets.jsonl",
        runs=run_paths,
        tag=tag,
        subject=subject,
        grade=grade,
        qids=qids,
        run_entries=entries,
    )
