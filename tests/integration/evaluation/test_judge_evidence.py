"""Automatic judges as evidence of the job's relevance model: a judge family is kept
where it pays, dropped where it is noise, and a noise judge does not move the centre
of the model-assisted estimate (its residual correction over the people's sample)."""

import random
from pathlib import Path

import numpy as np
import pytest

from nuggets_app.evaluation.services.estimates import (
    job_crossfit,
    job_sample_estimates,
)
from nuggets_app.inference.services import job_model
from nuggets_app.inference.services.export_provenance import model_info
from nuggets_app.judges.services import judge_labels_import
from nuggets_app.models import JobInference, Judge, PoolDocument

pytestmark = pytest.mark.django_db


def _pooled(world) -> list[tuple[str, str]]:
    return sorted(
        PoolDocument.objects.filter(pool=world.pool).values_list(
            "topic__qid", "document__docno"
        )
    )


def _import(world, tmp_path: Path, name: str, grades: dict) -> None:
    path = tmp_path / f"{name}.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in grades.items()))
    judge_labels_import(path=path, collection=world.collection, name=name)


def _truth_judge(world) -> dict:
    """Grades from the people's full qrels: 2 where relevant, 0 elsewhere."""
    return {
        (q, d): 2 if world.file_qrels.get(q, {}).get(d, 0) >= 1 else 0
        for q, d in _pooled(world)
    }


def _noise_judge(world, seed: int) -> dict:
    rng = random.Random(seed)
    return {(q, d): rng.randint(0, 3) for q, d in _pooled(world)}


def _fit(world) -> dict:
    job_model.features_cache_clear()
    job_model.job_model_fit(job=world.job)
    return JobInference.objects.get(job=world.job).fit_info


def test_an_informative_judge_is_kept_and_its_labels_locked(
    world, tmp_path, staff_client
):
    _import(world, tmp_path, "oracle", _truth_judge(world))
    info = _fit(world)
    assert [c["judge"] for c in info["judge_choice"]] == ["oracle"]
    assert info["judge_choice"][0]["kept"] is True
    read = info["judges"][0]
    assert read["name"] == "oracle"
    assert read["labels"] == len(_pooled(world))
    assert read["pairs"] > 0
    judge = Judge.objects.get(name="oracle")
    assert judge.used_at is not None
    assert str(world.job.pk) in judge.used_by
    sidecar = model_info(world.job)
    assert sidecar is not None
    assert sidecar["judge_choice"][0]["kept"] is True
    assert "judge:oracle:value" in sidecar["features"]
    from django.urls import reverse

    page = staff_client.get(reverse("job-detail", args=[world.job.pk]))
    assert 'id="model-judges"' in page.text
    assert 'data-judge-kept="true"' in page.text


def test_a_noise_judge_is_left_out_of_most_fits(world, tmp_path):
    """48 judged documents: held-out log-loss sometimes finds a pure-noise judge
    paying by chance; over eight noise judges most are left out (6 of 8 here)."""
    left_out = 0
    for seed in range(8):
        Judge.objects.filter(collection=world.collection).delete()
        _import(world, tmp_path, f"noise{seed}", _noise_judge(world, seed))
        choice = _fit(world)["judge_choice"][0]
        stored = JobInference.objects.get(job=world.job).model
        assert choice["kept"] == (f"judge:noise{seed}" not in stored.get("ablate", []))
        left_out += not choice["kept"]
    assert left_out >= 5


def test_a_noise_judge_kept_by_force_moves_width_not_the_centre(world, tmp_path):
    """Over several noise judges, kept in the cross-fit whatever they are worth,
    MAP's estimate moves by less than a tenth of its half-width on average."""
    runs = job_model_runs(world)
    shifts, widths = [], []
    for seed in range(4):
        Judge.objects.filter(collection=world.collection).delete()
        _import(world, tmp_path, f"noise{seed}", _noise_judge(world, 10 + seed))
        _fit(world)
        fitted_without = tuple(
            JobInference.objects.get(job=world.job).model.get("ablate", ())
        )
        kept = tuple(f for f in fitted_without if not f.startswith("judge:"))
        without = (*kept, f"judge:noise{seed}")
        figures = {}
        for label, ablate in (("with", kept), ("without", without)):
            probs = job_crossfit(job=world.job, sample=world.sample, ablate=ablate)
            found = job_sample_estimates(
                job=world.job, sample=world.sample, runs=runs, probs=probs
            )
            figures[label] = {n: e.ap for n, e in found.items()}
        for name in runs:
            a, b = figures["with"][name], figures["without"][name]
            shifts.append(a.estimate - b.estimate)
            widths.append((b.ci95[1] - b.ci95[0]) / 2)
    assert abs(float(np.mean(shifts))) < 0.1 * float(np.mean(widths))


def job_model_runs(world):
    from nuggets_app.evaluation.services.estimates import job_pool_runs

    return job_pool_runs(world.job)


def test_a_run_of_a_kept_judges_model_shows_its_estimate_without_it(
    world, tmp_path, researcher, client
):
    from django.urls import reverse

    from nuggets_app.collection.services.imports import runs_import
    from nuggets_app.evaluation.services.judge_circularity import circular_runs
    from nuggets_app.models import Run
    from tests.integration.worlds.judged_job import RUNS

    path = tmp_path / "oracle.qrels"
    path.write_text(
        "".join(f"{q} 0 {d} {g}\n" for (q, d), g in _truth_judge(world).items())
    )
    from nuggets_app.judges.services import JudgeInfo

    judge_labels_import(
        path=path, collection=world.collection, name="oracle",
        info=JudgeInfo(model="gpt-x"),
    )  # fmt: skip
    # The run's model, given at import (as import_runs --model and the upload form).
    source = tmp_path / "run.txt"
    source.write_text(
        "".join(
            f"{q} Q0 {d} {i} {s} {RUNS[0]}\n"
            for q, docs in world.file_runs[RUNS[0]].items()
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)
        )
    )
    runs_import(paths=[source], collection=world.collection, model="GPT-X")
    assert Run.objects.get(name=RUNS[0]).model == "GPT-X"
    info = _fit(world)
    assert info["judge_choice"][0]["kept"] is True
    runs = job_model_runs(world)
    found = circular_runs(job=world.job, sample=world.sample, runs=runs)
    assert [(c.run, c.judge) for c in found] == [(RUNS[0], "oracle")]
    without = job_sample_estimates(
        job=world.job,
        sample=world.sample,
        runs={RUNS[0]: runs[RUNS[0]]},
        probs=job_crossfit(
            job=world.job,
            sample=world.sample,
            ablate=(
                *JobInference.objects.get(job=world.job).model.get("ablate", ()),
                "judge:oracle",
            ),
        ),
    )[RUNS[0]].ap
    assert found[0].map == pytest.approx(without.estimate)
    client.force_login(researcher)
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    page = client.get(
        url, {"sample": world.sample.pk, "expected": world.job.pk, "qrels": "human"}
    )
    assert page.status_code == 200
    assert f'data-leans-on-judge="{RUNS[0]}"' in page.text
    assert "the model of judge <strong>oracle</strong>" in page.text
    assert f'data-leans-on-judge="{RUNS[1]}"' not in page.text
