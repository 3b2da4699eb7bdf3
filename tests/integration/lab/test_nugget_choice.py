"""A job keeps the nugget features only where its own held-out log-loss says they pay:
on the real ADI collection, with the job's real features, and with the same features
whose nugget columns are shuffled among each topic's documents (the nuggets then say
nothing about relevance, and the fit must leave them out)."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from lab.services.simulation import simulation_run
from lab.services.simulation_config import SimulationConfig
from nuggets_app.evaluation.services.estimates import job_crossfit
from nuggets_app.inference.services.job_model import (
    features_pack,
    features_unpack,
    job_model_fit,
)
from nuggets_app.learning.ablation import FEATURE_FAMILIES
from nuggets_app.learning.family_choice import LOGLOSS_TOLERANCE
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.models import JobInference, MatchChunk, MatchJob, Run, Sample
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
NUGGET_COLUMNS = [
    j for j, name in enumerate(FEATURE_NAMES) if name in FEATURE_FAMILIES["nuggets"]
]


def _job(adi, **options) -> tuple[MatchJob, Sample]:
    collection, qrels = adi
    config = SimulationConfig(depth=20, sample_size=8, seed=3, **options)
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    job = MatchJob.objects.get(pk=data.job_id)
    return job, Sample.objects.get(pool=job.pool, name=data.sample_name)


def _shuffle_nugget_columns(job: MatchJob) -> None:
    rng = np.random.default_rng(7)
    for chunk in MatchChunk.objects.filter(job=job):
        ids, matrix = features_unpack(bytes(chunk.packed_features))
        matrix = matrix.copy()
        order = rng.permutation(len(ids))
        matrix[:, NUGGET_COLUMNS] = matrix[order][:, NUGGET_COLUMNS]
        chunk.packed_features = features_pack(ids.tolist(), matrix)
        chunk.save(update_fields=["packed_features"])


def test_the_choice_follows_the_jobs_own_held_out_log_loss(adi):
    job, _ = _job(adi)
    stored = JobInference.objects.get(job=job)
    choice = stored.fit_info["nugget_choice"]
    assert choice["judged"] > 0
    pays = choice["logloss_with"] < choice["logloss_without"] - LOGLOSS_TOLERANCE
    assert choice["kept"] is pays
    assert stored.model.get("ablate", []) == ([] if pays else ["nuggets"])


def test_nuggets_that_say_nothing_are_left_out_of_the_fit_and_the_estimates(
    adi, client
):
    job, sample = _job(adi)
    _shuffle_nugget_columns(job)
    job_model_fit(job=job, sample=sample)
    stored = JobInference.objects.get(job=job)
    choice = stored.fit_info["nugget_choice"]
    assert choice["kept"] is False
    assert choice["verdict"] in ("hurt", "nothing")
    assert stored.model["ablate"] == ["nuggets"]
    assert all(stored.model["coef"][j] == 0.0 for j in NUGGET_COLUMNS)
    # The estimates' cross-fit reads the job's choice.
    assert job_crossfit(job=job, sample=sample) == job_crossfit(
        job=job, sample=sample, ablate=("nuggets",)
    )
    # The job page says which features were kept and why.
    user = UserFactory(username="carol")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(user)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "Nugget features <strong>left out</strong>" in page
    assert "so the fit keeps them only where they pay" in page
    # Asked to keep them, the fit keeps them and records no choice.
    job_model_fit(job=job, sample=sample, nugget_choice=False)
    stored = JobInference.objects.get(job=job)
    assert stored.fit_info["nugget_choice"] is None
    assert "ablate" not in stored.model
