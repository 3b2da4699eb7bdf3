"""statAP steered by an automatic judge, drawn through the product: the service, the
command, the staff form, prels and the design read back."""

from __future__ import annotations

import io
import random

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from nuggets_app.inference.services.exports import prels_export
from nuggets_app.ir.judge_sampling import draw_judge_shaped
from nuggets_app.models import (
    Judge,
    JudgeLabel,
    PoolDocument,
    Sample,
    SampleDocument,
    TaskRecord,
    Topic,
)
from nuggets_app.pooling.selectors import sample_design
from nuggets_app.pooling.services.samples import (
    SampleError,
    sample_draw,
    sample_extend,
)
from nuggets_app.staff import services as staff_tasks
from tests.integration.worlds.judges import judged_demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return judged_demo()


def _priors(pool) -> dict[str, dict[str, float]]:
    priors: dict[str, dict[str, float]] = {}
    for qid, docno, prior in PoolDocument.objects.filter(pool=pool).values_list(
        "topic__qid", "document__docno", "prior"
    ):
        priors.setdefault(qid, {})[docno] = prior
    return priors


def _graded_judge(world, *, every: int = 2) -> tuple[Judge, dict]:
    """A graded judge that labels every ``every``-th pooled document of each topic
    (by docno) with the truth's grade; the others it leaves unlabelled. Returns the
    judge and its strengths as the design reads them (grade / level, at most 1)."""
    judge = Judge.objects.create(
        collection=world.collection, name="half", kind=Judge.Kind.GRADED
    )
    level = world.collection.relevance_level
    topics = {t.qid: t for t in Topic.objects.filter(collection=world.collection)}
    labels, strengths = [], {}
    for qid, docs in _priors(world.sample.pool).items():
        for docno in sorted(docs)[::every]:
            grade = world.truth.get(qid, {}).get(docno, 0)
            labels.append(
                JudgeLabel(judge=judge, topic=topics[qid], docno=docno, grade=grade)
            )
            strengths.setdefault(qid, {})[docno] = min(1.0, grade / level)
    JudgeLabel.objects.bulk_create(labels)
    return judge, strengths


def test_the_drawn_sample_records_the_pure_design_s_exact_probabilities(world):
    judge, strengths = _graded_judge(world)
    sample = sample_draw(
        pool=world.sample.pool, size=6, method="statap", seed=4, name="steered",
        judge=judge, judge_weight=0.7,
    )  # fmt: skip
    assert (sample.judge, sample.judge_weight) == (judge, 0.7)
    judge.refresh_from_db()
    assert judge.used_at is not None
    assert "steered" in judge.used_by
    for qid, prior in _priors(sample.pool).items():
        expected = draw_judge_shaped(
            prior, strengths.get(qid, {}), 6, random.Random(f"4:{qid}"), 0.7
        )
        rows = SampleDocument.objects.filter(sample=sample, topic__qid=qid)
        stored = {r.document.docno: (r.order, r.inclusion_prob) for r in rows}
        assert stored == {
            d: (i, expected.inclusion[d]) for i, d in enumerate(expected.order, 1)
        }
        assert sample.draws[qid]["draws"] == expected.draws
        assert sample.draws[qid]["pi"] in ("exact", "census")


def test_every_pooled_document_has_a_positive_probability_labelled_or_not(world):
    judge, strengths = _graded_judge(world, every=3)
    sample = sample_draw(
        pool=world.sample.pool, size=4, method="statap", seed=1, name="steered",
        judge=judge, judge_weight=1.0,
    )  # fmt: skip
    design = sample_design(sample=sample)
    priors = _priors(sample.pool)
    unlabelled = 0
    for qid, prior in priors.items():
        assert set(design[qid]) == set(prior)
        assert all(0 < pi <= 1 for pi in design[qid].values())
        unlabelled += len(set(prior) - set(strengths.get(qid, {})))
        expected = draw_judge_shaped(
            prior, strengths.get(qid, {}), 4, random.Random(f"1:{qid}"), 1.0
        )
        for docno, pi in design[qid].items():
            assert pi == pytest.approx(expected.inclusion[docno], rel=1e-12)
    assert unlabelled > 0


def test_prels_say_which_judge_steered_the_sample(world):
    judge, _ = _graded_judge(world)
    sample = sample_draw(
        pool=world.sample.pool, size=5, method="statap", seed=2, name="steered",
        judge=judge,
    )  # fmt: skip
    assert sample.judge_weight == 0.5
    provenance = prels_export(sample=sample).provenance
    assert provenance is not None
    assert (provenance["judge"], provenance["judge_weight"]) == ("half", 0.5)


def test_a_judge_steers_statap_only_and_in_its_own_collection(world):
    judge, _ = _graded_judge(world)
    pool = world.sample.pool
    with pytest.raises(SampleError, match="steers the statap method only"):
        sample_draw(pool=pool, size=3, method="uniform", seed=1, name="u", judge=judge)
    with pytest.raises(SampleError, match=r"weight must lie in \[0, 1\]"):
        sample_draw(
            pool=pool, size=3, method="statap", seed=1, name="w", judge=judge,
            judge_weight=1.5,
        )  # fmt: skip
    with pytest.raises(SampleError, match="a judge's weight needs a judge"):
        sample_draw(
            pool=pool, size=3, method="statap", seed=1, name="w", judge_weight=0.3
        )


def test_the_command_draws_a_steered_sample_and_names_a_missing_judge(world):
    _graded_judge(world)
    out = io.StringIO()
    call_command(
        "sample", "--pool", world.sample.pool.name, "--name", "cmd", "--size", "5",
        "--judge", "half", "--judge-weight", "0.25", stdout=out,
    )  # fmt: skip
    assert "steered by judge half at weight 0.25" in out.getvalue()
    assert "inclusion probabilities: exact" in out.getvalue()
    with pytest.raises(CommandError, match=r"weight must lie in .* \(--judge-weight\)"):
        call_command(
            "sample", "--pool", world.sample.pool.name, "--name", "bad", "--size",
            "5", "--judge", "half", "--judge-weight", "2", stdout=io.StringIO(),
        )  # fmt: skip
    with pytest.raises(CommandError, match="has no judge nobody"):
        call_command(
            "sample", "--pool", world.sample.pool.name, "--name", "x", "--size",
            "5", "--judge", "nobody", stdout=io.StringIO(),
        )  # fmt: skip


def _form(judge) -> dict:
    return {
        "name": "formed", "method": "statap", "size": "5", "seed": 3,
        "judge": judge.pk, "judge_weight": "0.6", "draw": "1",
    }  # fmt: skip


def test_staff_draw_a_steered_sample_on_the_form(world, staff_client):
    judge, _ = _graded_judge(world)
    url = reverse("staff-pool", args=[world.sample.pool.pk])
    assert "Steered by judge" in staff_client.get(url).content.decode()
    staff_client.post(url, _form(judge))
    task = TaskRecord.objects.get(kind="sample")
    staff_tasks.staff_task_run(task_id=task.pk, phase="run")
    sample = Sample.objects.get(name="formed")
    assert (sample.judge, sample.judge_weight) == (judge, 0.6)
    page = staff_client.get(reverse("staff-sample", args=[sample.pk]))
    assert "steered by judge half at weight 0.6" in page.content.decode()


def test_the_form_refuses_a_judge_with_rounds(world, staff_client):
    judge, _ = _graded_judge(world)
    url = reverse("staff-pool", args=[world.sample.pool.pk])
    page = staff_client.post(url, {**_form(judge), "rounds": 2})
    assert "a judge steers a one-shot sample, not rounds" in page.content.decode()
    assert not TaskRecord.objects.filter(kind="sample")


def test_an_assessor_is_refused_the_form(world, client):
    judge, _ = _graded_judge(world)
    client.force_login(get_user_model().objects.get(username="alice"))
    response = client.post(
        reverse("staff-pool", args=[world.sample.pool.pk]), _form(judge)
    )
    assert response.status_code in (302, 403)
    assert not Sample.objects.filter(name="formed")


def test_extending_a_steered_sample_continues_its_draws_with_exact_pi(world):
    judge, strengths = _graded_judge(world)
    sample = sample_draw(
        pool=world.sample.pool, size=3, method="statap", seed=5, name="steered",
        judge=judge, judge_weight=0.5,
    )  # fmt: skip
    sample = sample_extend(sample=sample, extra=3)
    for qid, prior in _priors(sample.pool).items():
        expected = draw_judge_shaped(
            prior, strengths.get(qid, {}), 6, random.Random(f"5:{qid}"), 0.5
        )
        rows = SampleDocument.objects.filter(sample=sample, topic__qid=qid)
        stored = {r.document.docno: r.inclusion_prob for r in rows}
        assert stored == {d: expected.inclusion[d] for d in expected.order}
