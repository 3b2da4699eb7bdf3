"""The semantic features of a matching job's model, from stored embeddings.

With the semantic extra installed, a job's fit appends the four features of
:mod:`nuggets_app.learning.semantic_features` to the lexical ones its chunks stored:
the job's nuggets (its nugget filter) and the topic statement against each
document's windows, and the judged relevant documents' vectors against the
document's, leave-one-out as the lexical features. The same columns describe the
documents scored beside the pool (a new run's unpooled documents), so pooled and
unpooled documents are read by one model.

Only *stored* embeddings are read (``UnitEmbedding``, ``NuggetEmbedding``: the
collection's embedding job, ``manage.py embed``, and the nuggets' own embedding task;
an unpooled document is embedded by the task that scores it). The fit uses the
features only when every document of the job and every nugget it keeps has its
embedding (:func:`semantic_readiness`): a document without stored windows would be
described as one far from every nugget, which is evidence of nothing. The topic
statements, a few short texts, are embedded here (once per process).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nuggets_app.inference.services import embeddings as stored
from nuggets_app.judging.selectors import human_grades
from nuggets_app.learning.embeddings import DIMENSION
from nuggets_app.learning.semantic_features import (
    SEMANTIC_FEATURE_NAMES,
    semantic_evidence,
    semantic_features,
)
from nuggets_app.models import Document, MatchJob, Nugget, Topic, UnitEmbedding

Features = Mapping[int, tuple[Sequence[int] | np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class SemanticReadiness:
    """Whether a job's fit can use the semantic features, and if not why."""

    on: bool
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {"on": self.on, "reason": self.reason}


def _job_nuggets(job: MatchJob, topic_ids: Iterable[int]) -> list[Nugget]:
    from nuggets_app.inference.selectors import nuggets_kept

    return list(
        nuggets_kept(Nugget.objects.filter(topic_id__in=list(topic_ids)), job)
        .select_related("document")
        .order_by("pk")
    )


def topic_statement(topic: Topic) -> str:
    """The title, and the description when it says something else."""
    title, description = topic.title.strip(), topic.description.strip()
    if not title or description.startswith(title):
        return description or title
    return f"{title}\n{description}" if description else title


def semantic_readiness(job: MatchJob, document_ids: Iterable[int]) -> SemanticReadiness:
    """On when the extra is installed and every one of ``document_ids`` and of the
    job's nuggets has a stored embedding; else off, saying why in plain words."""
    if not stored.semantic_on():
        return SemanticReadiness(False, stored.semantic_status())
    ids = sorted(set(int(d) for d in document_ids))
    # Counted on the embeddings' table alone (a fit reads no document row).
    missing = len(ids)
    for start in range(0, len(ids), 5000):
        missing -= (
            UnitEmbedding.objects.filter(
                document_id__in=ids[start : start + 5000], model=stored.MODEL
            )
            .values("document_id")
            .distinct()
            .count()
        )
    if missing:
        return SemanticReadiness(
            False,
            f"semantic features: off ({missing} of {len(ids)} documents of the job "
            f"have no stored embedding; embed the documents of "
            f"{job.collection.name} first)",
        )
    from nuggets_app.inference.selectors import nuggets_kept

    texts = dict(
        nuggets_kept(
            Nugget.objects.filter(topic__in=job.topics.all()), job
        ).values_list("pk", "text")
    )
    pending = stored.nuggets_unembedded(texts)
    if pending:
        return SemanticReadiness(
            False,
            f"semantic features: off ({len(pending)} of {len(texts)} nuggets are "
            "not embedded yet)",
        )
    return SemanticReadiness(True, f"semantic features: on ({stored.MODEL})")


@functools.lru_cache(maxsize=4096)
def _statement_vector(statement: str) -> np.ndarray:
    """The embedding of a topic statement (computed once per process)."""
    return stored.text_vectors([statement])[0]


def semantic_columns(job: MatchJob, features: Features) -> dict[int, np.ndarray]:
    """{topic id: (documents x 4) semantic features} of the documents of
    ``features`` ({topic id: (document ids, ...)}), with the job's nuggets and the
    judgments of now at the job's relevance level."""
    topic_ids = list(features)
    level = job.relevance_level
    relevant: dict[int, set[int]] = {}
    for (topic_id, doc_id), grade in human_grades(topic_ids).items():
        if grade >= level:
            relevant.setdefault(topic_id, set()).add(doc_id)
    doc_ids = {int(d) for ids, _ in features.values() for d in np.asarray(ids).tolist()}
    doc_ids |= {d for docs in relevant.values() for d in docs}
    docnos = dict(Document.objects.filter(pk__in=doc_ids).values_list("pk", "docno"))
    empty = np.zeros((0, DIMENSION), np.float32)
    windows = {d: w for d, (_, w) in stored.document_windows(doc_ids).items()}
    nuggets = _job_nuggets(job, topic_ids)
    vectors = stored.nugget_vectors(
        [n.pk for n in nuggets], texts={n.pk: n.text for n in nuggets}
    )
    by_topic: dict[int, list[Nugget]] = {}
    for nugget in nuggets:
        by_topic.setdefault(nugget.topic_id, []).append(nugget)
    topics = {t.pk: t for t in Topic.objects.filter(pk__in=topic_ids)}
    out: dict[int, np.ndarray] = {}
    for topic_id, (ids, _) in features.items():
        statement = topic_statement(topics[topic_id])
        evidence = semantic_evidence(
            nuggets=[
                (vectors[n.pk], n.document.docno if n.document is not None else None)
                for n in by_topic.get(topic_id, [])
                if n.pk in vectors
            ],
            relevant_windows={
                docnos[d]: windows.get(d, empty)
                for d in sorted(relevant.get(topic_id, ()))
            },
            dimension=DIMENSION,
            topic=_statement_vector(statement) if statement else None,
        )
        ordered = np.asarray(ids).tolist()
        out[topic_id] = np.array(
            [
                semantic_features(evidence, docnos[d], windows.get(d, empty))
                for d in ordered
            ],
            dtype=np.float64,
        ).reshape(len(ordered), len(SEMANTIC_FEATURE_NAMES))
    return out


def with_semantic(job: MatchJob, features: Features) -> dict[int, tuple]:
    """``features`` with the semantic columns appended to each topic's matrix."""
    columns = semantic_columns(job, features)
    return {
        t: (ids, np.hstack([np.asarray(x, dtype=np.float64), columns[t]]))
        for t, (ids, x) in features.items()
    }
