"""The semantic features are not part of a matching job's model: the simulation, which
measures the product's own path, refuses them with a clear message rather than
measuring a model no user gets."""

from __future__ import annotations

import pytest

from lab.maths.simulation import SimulationError
from lab.services.simulation import simulation_run
from lab.services.simulation_config import SimulationConfig
from nuggets_app.models import Run


@pytest.mark.django_db
def test_semantic_simulation_is_refused_before_it_costs_anything(adi):
    collection, qrels = adi
    config = SimulationConfig(depth=20, sample_size=6, seed=3, semantic=True)
    with pytest.raises(SimulationError, match="semantic features are not part"):
        simulation_run(
            collection=collection,
            qrels_path=qrels,
            runs=Run.objects.all(),
            config=config,
        )
