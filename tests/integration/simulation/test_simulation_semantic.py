"""The simulation with the relevance model's semantic features on the real ADI
collection and the real packaged model (skipped only without the extra)."""

from __future__ import annotations

import pytest

from nuggets_app.learning import embeddings
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.learning.semantic_features import SEMANTIC_FEATURE_NAMES
from nuggets_app.models import Document, Nugget, NuggetEmbedding, Run, UnitEmbedding
from nuggets_app.research.services.simulation import SimulationConfig, simulation_run
from nuggets_app.research.services.simulation_report import report_build

pytestmark = pytest.mark.skipif(
    not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE
)


@pytest.mark.django_db
def test_semantic_features_join_the_model_and_embeddings_are_kept(adi):
    collection, qrels = adi
    config = SimulationConfig(depth=20, sample_size=6, seed=3, semantic=True)
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    assert data.model is not None
    assert tuple(data.model["feature_names"]) == FEATURE_NAMES + SEMANTIC_FEATURE_NAMES
    values = [p for docs in data.probabilities.values() for p in docs.values()]
    assert all(0.0 <= p <= 1.0 for p in values)
    report = report_build(data)
    assert report["config"]["semantic"] is True
    # Every pooled document and every nugget has its embedding stored, once.
    pooled = {d for docs in data.pool.values() for d in docs}
    embedded = set(
        Document.objects.filter(
            collection=collection, embeddings__model=embeddings.MODEL_NAME
        ).values_list("docno", flat=True)
    )
    assert pooled <= embedded
    nuggets = Nugget.objects.filter(topic__collection=collection)
    assert NuggetEmbedding.objects.filter(nugget__in=nuggets).count() == nuggets.count()
    rows = UnitEmbedding.objects.count()
    again = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    assert UnitEmbedding.objects.count() == rows
    assert again.probabilities == data.probabilities
