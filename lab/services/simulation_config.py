"""The parameters of one simulation (``manage.py simulate``) and its error."""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.maths.simulation import ExtractionOptions

SIMULATED_ASSESSOR = "simulated-assessor"


@dataclass(frozen=True)
class SimulationConfig:
    """Parameters of one simulation (command-line options of ``manage.py simulate``)."""

    depth: int = 100
    sample_size: int = 10
    # When set, the per-topic sample size is this fraction of the mean pool size.
    sample_fraction: float | None = None
    seed: int = 1
    extraction: ExtractionOptions = field(default_factory=ExtractionOptions)
    rule: str = "threshold:0.5"
    k: int = 3
    lam: float = 0.5
    relevance_level: int = 1
    assessor: str = SIMULATED_ASSESSOR
    expansion_terms: int = 20
    # "model": the relevance model's probabilities; "paper": the matcher score + rule.
    inference: str = "model"
    # "simulated": nuggets cut from judged relevant documents (lab.maths.simulation);
    # "human": a bank's nuggets with a source span in one (e.g. TREC TS matches).
    nuggets: str = "simulated"
    nugget_bank: str | None = None
    semantic: bool = False  # the model's semantic features (the job's one fit)
    # The job keeps the nugget family only where its held-out log-loss says it pays
    # (learning.family_choice); off: always kept.
    nugget_choice: bool = True
    ablate: tuple[str, ...] = ()  # feature families left out (learning.ablation)
    # Automatic judges of the collection (lab.services.simulation_judges), each
    # (name, path): a labels file to import, or a table P(judge | people) to draw from.
    judge_labels: tuple[tuple[str, str], ...] = ()
    judge_tables: tuple[tuple[str, str], ...] = ()
    # Replace an earlier simulation's judgments on this collection, deleting the jobs
    # that were fitted on them (without it, such a simulation is refused).
    replace: bool = False
    # Only the estimators' inputs (lab.studies.simulate_dump): neither the feedback
    # baseline nor the job's estimates, which no estimator variant reads.
    inputs_only: bool = False
