"""Nugget shingle min-span matcher: a plain library (standard library + NLTK).

Typical use::

    matcher = TopicMatcher([NuggetSpec("n1", "John Kennedy was elected president")])
    match = matcher.score(document_text)
    match.score, match.nugget, match.spans   # spans: [start, end) in the text
    rescore(match.evidence, 0.8)             # new lambda, no text needed

The algorithm is specified in docs/reference/algorithms.md section 4; the command line is
``python -m matcher score ...`` (see ``matcher.cli``).
"""

from .evidence import (
    Evidence,
    NuggetEvidence,
    Rescorer,
    nugget_score,
    rescore,
    rescore_json,
)
from .options import MatcherError, MatchOptions
from .score import DocumentMatch, NuggetSpec, TopicMatcher
from .shingles import nugget_shingles
from .span import min_span
from .tokens import (
    PreparedText,
    Token,
    default_stopwords,
    normalize,
    pipeline_version,
    tokenize,
)

__all__ = [
    "DocumentMatch",
    "Evidence",
    "MatchOptions",
    "MatcherError",
    "NuggetEvidence",
    "NuggetSpec",
    "PreparedText",
    "Rescorer",
    "Token",
    "TopicMatcher",
    "default_stopwords",
    "min_span",
    "normalize",
    "nugget_score",
    "nugget_shingles",
    "pipeline_version",
    "rescore",
    "rescore_json",
    "tokenize",
]
