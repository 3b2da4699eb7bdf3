"""Domain models, one module per aggregate."""

from .collections import Collection, Document
from .embeddings import EmbeddingJob, NuggetEmbedding, UnitEmbedding
from .history import WorkChange
from .judges import Judge, JudgeLabel
from .judgments import Assignment, Judgment
from .matching import (
    JobInference,
    JobStatsPart,
    JobTopicProbabilities,
    MatchChunk,
    MatchJob,
    MatchResult,
)
from .nuggets import Nugget, NuggetBank
from .pools import Pool, PoolDocument
from .preferences import AssessorPreference
from .qrels import Qrels, QrelsEntry
from .quality import Adjudication, Guidelines, KnownAnswer
from .runs import Run, RunEntry
from .samples import Sample, SampleDocument
from .task_records import TaskRecord
from .topics import Topic
from .unpooled import JobNewRun, UnpooledScore

__all__ = [
    "Adjudication",
    "AssessorPreference",
    "Assignment",
    "Collection",
    "Document",
    "EmbeddingJob",
    "Guidelines",
    "JobInference",
    "JobNewRun",
    "JobStatsPart",
    "JobTopicProbabilities",
    "Judge",
    "JudgeLabel",
    "Judgment",
    "KnownAnswer",
    "MatchChunk",
    "MatchJob",
    "MatchResult",
    "Nugget",
    "NuggetBank",
    "NuggetEmbedding",
    "Pool",
    "PoolDocument",
    "Qrels",
    "QrelsEntry",
    "Run",
    "RunEntry",
    "Sample",
    "SampleDocument",
    "TaskRecord",
    "Topic",
    "UnitEmbedding",
    "UnpooledScore",
    "WorkChange",
]
