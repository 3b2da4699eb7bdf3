"""The semantic features in a matching job's own fit, on the real ADI collection with
the packaged encoder: a simulation with ``semantic`` fits the job's model with them,
the documents scored beside the pool (a new run's unpooled documents) are described
with the same columns, and without the extra (or without asking) nothing changes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lab.services.simulation import simulation_run
from lab.services.simulation_config import SimulationConfig
from nuggets_app.inference.services.job_model import fit_data, job_features
from nuggets_app.inference.services.job_semantic import with_semantic
from nuggets_app.inference.services.unpooled import (
    later_columns,
    unpooled_ensure,
    unpooled_features,
)
from nuggets_app.learning import embeddings
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.learning.relevance_model import RelevanceModel
from nuggets_app.learning.semantic_features import SEMANTIC_FEATURE_NAMES
from nuggets_app.learning.unpooled import predict_beside_pool
from nuggets_app.models import Document, JobInference, MatchJob, Run, UnitEmbedding

pytestmark = pytest.mark.django_db
needs_extra = pytest.mark.skipif(
    not embeddings.semantic_available(), reason=embeddings.OFF_MESSAGE
)


def _simulate(adi, *, semantic: bool):
    collection, qrels = adi
    config = SimulationConfig(depth=20, sample_size=8, seed=3, semantic=semantic)
    return simulation_run(
        collection=collection,
        qrels_path=qrels,
        runs=Run.objects.all(),
        config=config,
    )


@needs_extra
def test_the_jobs_own_fit_uses_the_semantic_features_for_pooled_and_unpooled(adi):
    data = _simulate(adi, semantic=True)
    job = MatchJob.objects.get(pk=data.job_id)
    stored = JobInference.objects.get(job=job)
    names = stored.model["feature_names"]
    assert names == list(FEATURE_NAMES + SEMANTIC_FEATURE_NAMES)
    assert stored.fit_info["semantic"]["on"] is True
    assert data.families is not None
    assert data.families["semantic"]["on"] is True
    assert "semantic" in data.families["kept"]
    # The cross-fit behind the estimates reads the same columns as the fit.
    fit = fit_data(job, semantic=True)
    assert fit.feature_names == tuple(names)
    assert all(x.shape[1] == len(names) for _, x in fit.features.values())
    # The pooled documents' semantic features are real similarities.
    pooled = np.vstack([x[:, len(FEATURE_NAMES) :] for _, x in fit.features.values()])
    assert pooled[:, 0].max() > 0.3
    assert np.all(pooled[:, [0, 1, 3]] >= 0)

    # Documents the job never matched (outside the depth-20 pool), scored as a new
    # run's unpooled documents: embedded by the task that scores them and described
    # with the semantic columns too.
    width = len(FEATURE_NAMES)
    topic_id = max(fit.features, key=lambda t: fit.features[t][1][:, width].max())
    in_job = set(job_features(job)[topic_id][0].tolist())
    outside = [
        pk
        for pk in Document.objects.filter(collection=job.collection)
        .order_by("pk")
        .values_list("pk", flat=True)
        if pk not in in_job
    ][:12]
    assert outside
    UnitEmbedding.objects.filter(document_id__in=outside).delete()
    wanted = {topic_id: outside}
    progress = unpooled_ensure(job=job, wanted=wanted, inline_max=100)
    assert progress.done
    assert set(
        UnitEmbedding.objects.filter(document_id__in=outside).values_list(
            "document_id", flat=True
        )
    ) == set(outside)
    extra = unpooled_features(job=job, wanted=wanted, semantic=True)
    ids, matrix = extra[topic_id]
    assert matrix.shape == (len(outside), len(names))
    assert matrix[:, width].max() > 0.0  # nugget_semantic_max
    assert np.all(matrix[:, width + 3] > 0.0)  # topic_semantic
    # The job's model scores them with those columns, beside the pool's.
    model = RelevanceModel.from_json(json.dumps(stored.model))
    pool = with_semantic(job, {topic_id: job_features(job)[topic_id]})[topic_id][1]
    got_ids, got_p = later_columns(job=job, on_model=True)[topic_id]
    assert got_ids.tolist() == sorted(ids)
    order = np.argsort(np.asarray(ids))
    expected = predict_beside_pool(model, pool, matrix)[order]
    np.testing.assert_allclose(got_p, expected)
    blind = matrix.copy()
    blind[:, len(FEATURE_NAMES) :] = 0.0
    if any(model.coef[len(FEATURE_NAMES) :]):
        assert not np.allclose(predict_beside_pool(model, pool, blind)[order], got_p)


def test_without_asking_or_without_the_extra_the_fit_is_lexical(adi, monkeypatch):
    data = _simulate(adi, semantic=False)
    job = MatchJob.objects.get(pk=data.job_id)
    stored = JobInference.objects.get(job=job)
    assert stored.model["feature_names"] == list(FEATURE_NAMES)
    assert data.families is not None
    assert data.families["semantic"]["on"] is False
    monkeypatch.setenv("SEMANTIC_EVIDENCE", "off")
    fit = fit_data(job)
    assert fit.feature_names == FEATURE_NAMES
    assert fit.semantic == {
        "on": False,
        "reason": "semantic evidence: off (SEMANTIC_EVIDENCE=off)",
    }
