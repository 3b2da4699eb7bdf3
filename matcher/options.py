"""Matcher options and the single error type of the package."""

from __future__ import annotations

from dataclasses import dataclass

STEMMERS = ("porter", "none")
STOPWORD_LISTS = ("default", "none")


class MatcherError(Exception):
    """Bad matcher input; the message names the file, field or line at fault.

    The matcher's only error, and no error of the product: the product raises its
    sentence again as a domain error where it calls the matcher."""


@dataclass(frozen=True)
class MatchOptions:
    """Parameters of the shingle min-span matcher (docs/reference/algorithms.md section 4).

    ``k`` is the shingle size (default 3, at least 1); ``lam`` the decay
    lambda in (0, 1] (default 0.5) of ``lam ** ((S - k) / k)``; ``stem`` is
    ``porter`` (NLTK PorterStemmer, default mode) or ``none``; ``stopwords``
    is ``default`` (the list shipped in ``matcher/data``) or ``none``.
    """

    k: int = 3
    lam: float = 0.5
    stem: str = "porter"
    stopwords: str = "default"

    def __post_init__(self) -> None:
        # bool is an int subclass; True as a shingle size is a caller bug.
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise MatcherError(f"k: must be an integer >= 1, got {self.k!r}")
        lam = self.lam
        if isinstance(lam, bool) or not isinstance(lam, int | float):
            raise MatcherError(f"lam: must be a number in (0, 1], got {lam!r}")
        if not 0.0 < lam <= 1.0:  # also rejects NaN
            raise MatcherError(f"lam: must be in (0, 1], got {lam!r}")
        if self.stem not in STEMMERS:
            raise MatcherError(
                f"stem: must be one of {', '.join(STEMMERS)}, got {self.stem!r}"
            )
        if self.stopwords not in STOPWORD_LISTS:
            raise MatcherError(
                "stopwords: must be one of "
                f"{', '.join(STOPWORD_LISTS)}, got {self.stopwords!r}"
            )
