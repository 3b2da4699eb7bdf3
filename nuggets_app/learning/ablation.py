"""Feature families of the relevance model, and which columns an ablation leaves out.

Pure and Django-free. Every feature of the model (the lexical features of
:mod:`nuggets_app.learning.relevance_features` and the semantic ones of
:mod:`nuggets_app.learning.semantic_features`) belongs to at least one *family*, named
after the evidence it comes from:

``nuggets``
    what the assessors' nuggets give: ``nugget_bm25``, the min-span matcher's
    ``minspan_mean`` and ``minspan_matched``, and the nuggets' semantic scores
    ``nugget_semantic_max`` / ``nugget_semantic_mean``;
``topic``
    the topic statement and how rich the topic is: ``topic_bm25``,
    ``log_prevalence``, ``topic_semantic``;
``feedback``
    BM25 with relevance feedback from the judged relevant documents:
    ``feedback_bm25``;
``similarity``
    the judged documents' centroids: ``relevant_similarity``,
    ``nonrelevant_similarity``;
``semantic``
    every embedding feature (the optional extra): ``nugget_semantic_max``,
    ``nugget_semantic_mean``, ``relevant_semantic``, ``topic_semantic``.

``judge:NAME``
    an automatic judge's grades (``judge:NAME:value``, its grade, probability of
    relevance or score, and ``judge:NAME:missing``, 1 where the judge gave no
    label): one family per judge, named by its judge (the name keeps its case).

A semantic nugget feature is in both ``nuggets`` and ``semantic``: ablating the
nuggets removes everything the nuggets contribute, whatever the encoder.

An *ablated* fit (``ablate`` of :func:`nuggets_app.learning.relevance_model.model_fit`)
leaves the columns of the named families out of the regression: the model keeps every
column, so it reads the same feature matrices as any other, with a coefficient of 0 on
the ablated ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nuggets_app.learning.relevance_features import RelevanceModelError

FEATURE_FAMILIES: dict[str, frozenset[str]] = {
    "nuggets": frozenset(
        {
            "nugget_bm25",
            "minspan_mean",
            "minspan_matched",
            "nugget_semantic_max",
            "nugget_semantic_mean",
        }
    ),
    "topic": frozenset({"topic_bm25", "log_prevalence", "topic_semantic"}),
    "feedback": frozenset({"feedback_bm25"}),
    "similarity": frozenset({"relevant_similarity", "nonrelevant_similarity"}),
    "semantic": frozenset(
        {
            "nugget_semantic_max",
            "nugget_semantic_mean",
            "relevant_semantic",
            "topic_semantic",
        }
    ),
}
FAMILIES: tuple[str, ...] = tuple(FEATURE_FAMILIES)
JUDGE_PREFIX = "judge:"


def judge_family(name: str) -> str:
    """The family of the judge called ``name``."""
    return JUDGE_PREFIX + name


def judge_feature_names(name: str) -> tuple[str, str]:
    """The judge's two columns: its value, and 1 where it gave no label."""
    family = judge_family(name)
    return (f"{family}:value", f"{family}:missing")


def judge_of_family(family: str) -> str | None:
    """The judge's name of a judge family (None for another family)."""
    return family[len(JUDGE_PREFIX) :] if family.startswith(JUDGE_PREFIX) else None


def ablate_parse(text: str | Iterable[str]) -> tuple[str, ...]:
    """Families from ``"nuggets,topic"`` (or a list of names): sorted, without
    repeats. Raises :class:`RelevanceModelError` naming an unknown family."""
    names = text.split(",") if isinstance(text, str) else list(text)
    # A judge family keeps its judge's name as written.
    found = {
        n.strip() if n.strip().startswith(JUDGE_PREFIX) else n.strip().lower()
        for n in names
        if n.strip()
    }
    unknown = sorted(
        n for n in found - set(FEATURE_FAMILIES) if judge_of_family(n) in (None, "")
    )
    if unknown:
        raise RelevanceModelError(
            f"unknown feature family {unknown[0]!r}: choose from {', '.join(FAMILIES)}"
        )
    return tuple(sorted(found))


def ablated_features(ablate: Iterable[str]) -> frozenset[str]:
    """The feature names of the ``ablate`` families."""
    out: set[str] = set()
    for family in ablate_parse(list(ablate)):
        judge = judge_of_family(family)
        out |= (
            FEATURE_FAMILIES[family]
            if judge is None
            else set(judge_feature_names(judge))
        )
    return frozenset(out)


def kept_columns(feature_names: Sequence[str], ablate: Iterable[str]) -> list[int]:
    """Indices of the columns an ablated fit keeps (every one without ``ablate``).
    Raises :class:`RelevanceModelError` when no column would be left."""
    dropped = ablated_features(ablate)
    kept = [j for j, name in enumerate(feature_names) if name not in dropped]
    if not kept:
        raise RelevanceModelError(
            "ablating " + ", ".join(ablate_parse(list(ablate))) + " leaves no feature"
        )
    return kept
