"""File formats: pure parsers that yield records with line numbers (no database here).

Loaders that write to the database live in :mod:`nuggets_app.collection.services.imports`.
"""

from .documents import parse_collection
from .errors import ErrorSink, ImportFormatError, ImportFormatErrors
from .qrels import QrelsLine, parse_qrels
from .records import DocRecord
from .runs import RunLine, parse_run, rank_by_score
from .topics import TopicRecord, parse_topics

__all__ = [
    "DocRecord",
    "ErrorSink",
    "ImportFormatError",
    "ImportFormatErrors",
    "QrelsLine",
    "RunLine",
    "TopicRecord",
    "parse_collection",
    "parse_qrels",
    "parse_run",
    "parse_topics",
    "rank_by_score",
]
