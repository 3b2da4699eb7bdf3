"""The demo judged by people and by an automatic judge: ``manage.py demo``, alice
judges every drawn document of the demo's statAP sample with the demo's own qrels,
and a judge's qrels for the whole pool is written from the same truth with
deterministic flips (every fifth pooled document of a topic, by docno, gets the
opposite call), plus labels for documents the collection does not hold."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command

from nuggets_app.collection.services.suite_runs import qrels_read
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.models import (
    Collection,
    Judgment,
    PoolDocument,
    Sample,
    SampleDocument,
)

# Docnos the judge labels that no collection holds (labels beyond the pool).
BEYOND = ("beyond-1", "beyond-2")
FLIP_EVERY = 5


@dataclass
class JudgedDemo:
    collection: Collection
    sample: Sample
    truth: dict[str, dict[str, int]]


def judged_demo() -> JudgedDemo:
    """The demo with alice's judgments of its statAP sample (grades of its qrels)."""
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    collection = Collection.objects.get(name="demo")
    sample = Sample.objects.get(name="demo-statap15")
    alice = get_user_model().objects.get(username="alice")
    truth = qrels_read(DATA_DIR / "qrels.txt")
    rows = SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    )
    Judgment.objects.bulk_create(
        Judgment(
            topic=row.topic,
            document=row.document,
            assessor=alice,
            relevance=truth.get(row.topic.qid, {}).get(row.document.docno, 0),
            version=1,
        )
        for row in rows
    )
    return JudgedDemo(collection, sample, truth)


def judge_grades(world: JudgedDemo) -> dict[tuple[str, str], int]:
    """The judge's grade of every pooled document: the truth's grade, except every
    fifth document of a topic (by docno), whose call is flipped (relevant -> 0,
    non-relevant -> 2)."""
    level = world.collection.relevance_level
    pooled: dict[str, list[str]] = {}
    for qid, docno in PoolDocument.objects.filter(pool=world.sample.pool).values_list(
        "topic__qid", "document__docno"
    ):
        pooled.setdefault(qid, []).append(docno)
    grades = {}
    for qid, docnos in pooled.items():
        for i, docno in enumerate(sorted(docnos)):
            grade = world.truth.get(qid, {}).get(docno, 0)
            if i % FLIP_EVERY == 0:
                grade = 0 if grade >= level else 2
            grades[(qid, docno)] = grade
    return grades


def write_judge_qrels(world: JudgedDemo, path: Path) -> Path:
    """The judge's qrels (:func:`judge_grades`, then the labels beyond the pool)."""
    grades = judge_grades(world)
    lines = [f"{q} 0 {d} {g}" for (q, d), g in sorted(grades.items())]
    first = sorted(grades)[0][0]
    lines += [f"{first} 0 {docno} 2" for docno in BEYOND]
    path.write_text("\n".join(lines) + "\n")
    return path
