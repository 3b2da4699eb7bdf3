"""Whether a job's model keeps the nugget features: its own held-out log-loss decides.

Pure and Django-free. The nugget family (:mod:`nuggets_app.learning.ablation`) is
what the assessors' nuggets give the relevance model. On some collections it pays,
on others (few nuggets, nuggets that repeat the topic statement) it only adds noise
to a fit on a few hundred judged documents. :func:`nugget_choice` measures it on the
job's own judged documents: every judged document's p from a model fitted without
its fold (:func:`nuggets_app.learning.reliability.heldout_predictions`), with and
without the family, scored by the log-loss ``-mean(y ln p + (1 - y) ln(1 - p))``.
The family is kept only where it *pays*: its log-loss is lower by at least
:data:`LOGLOSS_TOLERANCE` (a few thousandths is the spread of a refit on other
folds); where the two are within it, or it hurts, the simpler model is kept.

An automatic judge's grades are a family too (``judge:NAME``, one per judge):
:func:`families_choice` decides several families in turn, the same way, each against
the model that keeps what the families before it kept. A judge that pays narrows the
estimates; one that is noise is left out; either way the estimator's residual
correction over the people's sample keeps its centre where the people put it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nuggets_app.learning.relevance_features import FEATURE_NAMES, FloatArray
from nuggets_app.learning.reliability import heldout_predictions

LOGLOSS_TOLERANCE = 0.002
NUGGETS = "nuggets"


def log_loss(held: Sequence[tuple[float, int]]) -> float | None:
    """Mean ``-(y ln p + (1 - y) ln(1 - p))``, p clipped to [1e-6, 1 - 1e-6]."""
    if not held:
        return None
    p = np.clip(np.array([v for v, _ in held], dtype=float), 1e-6, 1.0 - 1e-6)
    y = np.array([label for _, label in held], dtype=float)
    return float(-np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p)))


def verdict(with_: float | None, without: float | None) -> str:
    """``"pay"``, ``"hurt"`` or ``"nothing"`` from the two held-out log-losses."""
    if with_ is None or without is None or abs(without - with_) < LOGLOSS_TOLERANCE:
        return "nothing"
    return "pay" if with_ < without else "hurt"


@dataclass(frozen=True)
class NuggetChoice:
    """The two held-out log-losses of one family, the verdict and what the fit
    keeps (``family``: the nuggets unless named)."""

    logloss_with: float | None
    logloss_without: float | None
    judged: int
    verdict: str
    # (p, label) of the kept variant: the reliability diagram reads the same folds.
    held: list[tuple[float, int]]
    family: str = NUGGETS

    @property
    def kept(self) -> bool:
        return self.verdict == "pay"

    @property
    def ablate(self) -> tuple[str, ...]:
        return () if self.kept else (self.family,)

    def as_dict(self) -> dict[str, Any]:
        """What the job's fit records (``fit_info["nugget_choice"]``)."""
        return {
            "family": self.family,
            "kept": self.kept,
            "verdict": self.verdict,
            "logloss_with": self.logloss_with,
            "logloss_without": self.logloss_without,
            "judged": self.judged,
            "tolerance": LOGLOSS_TOLERANCE,
        }


def nugget_choice(
    data: Mapping[str, tuple[FloatArray, np.ndarray]],
    *,
    weights: Mapping[str, FloatArray] | None = None,
    pool_relevant: float | None = None,
    feature_names: Sequence[str] = FEATURE_NAMES,
) -> NuggetChoice:
    """Held-out log-loss with and without the nugget family, and the choice."""
    common: dict[str, Any] = {
        "weights": weights,
        "pool_relevant": pool_relevant,
        "feature_names": feature_names,
    }
    with_held = heldout_predictions(dict(data), **common)
    without_held = heldout_predictions(dict(data), ablate=(NUGGETS,), **common)
    a, b = log_loss(with_held), log_loss(without_held)
    found = verdict(a, b)
    return NuggetChoice(
        a, b, len(with_held), found, with_held if found == "pay" else without_held
    )


@dataclass(frozen=True)
class FamiliesChoice:
    """The choice of every family asked about, in order, and what the fit keeps:
    ``ablate`` (the families left out) and ``held`` (the kept model's held-out p)."""

    choices: tuple[NuggetChoice, ...]
    ablate: tuple[str, ...]
    held: list[tuple[float, int]]

    def of(self, family: str) -> NuggetChoice | None:
        """The choice of ``family`` (None: not asked about)."""
        return next((c for c in self.choices if c.family == family), None)


def families_choice(
    data: Mapping[str, tuple[FloatArray, np.ndarray]],
    *,
    families: Sequence[str],
    weights: Mapping[str, FloatArray] | None = None,
    pool_relevant: float | None = None,
    feature_names: Sequence[str] = FEATURE_NAMES,
) -> FamiliesChoice:
    """Each family of ``families`` in turn, kept only where it pays against the
    model of the families kept so far (one held-out fit per family, plus one)."""
    common: dict[str, Any] = {
        "weights": weights,
        "pool_relevant": pool_relevant,
        "feature_names": feature_names,
    }
    left_out: list[str] = []
    held = heldout_predictions(dict(data), **common)
    choices = []
    for family in families:
        without = heldout_predictions(dict(data), ablate=(*left_out, family), **common)
        a, b = log_loss(held), log_loss(without)
        found = verdict(a, b)
        choices.append(
            NuggetChoice(
                a, b, len(held), found, held if found == "pay" else without, family
            )
        )
        if found != "pay":
            left_out.append(family)
            held = without
    return FamiliesChoice(tuple(choices), tuple(left_out), held)
