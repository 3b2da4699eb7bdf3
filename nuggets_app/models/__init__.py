"""Domain models, one module per aggregate."""

from .collections import Collection, Document
from .judgments import Assignment, Judgment
from .matching import MatchChunk, MatchJob, MatchResult
from .nuggets import Nugget
from .pools import Pool, PoolDocument
from .qrels import Qrels, QrelsEntry
from .runs import Run, RunEntry
from .samples import Sample, SampleDocument
from .topics import Topic

__all__ = [
    "Assignment",
    "Collection",
    "Document",
    "Judgment",
    "MatchChunk",
    "MatchJob",
    "MatchResult",
    "Nugget",
    "Pool",
    "PoolDocument",
    "Qrels",
    "QrelsEntry",
    "Run",
    "RunEntry",
    "Sample",
    "SampleDocument",
    "Topic",
]
