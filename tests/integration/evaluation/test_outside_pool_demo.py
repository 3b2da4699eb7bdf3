"""The demo's adversarial new run (issue 41): ``demo-bm25-noisy`` reversed, with ten
documents outside the pool first for every topic. Its truth is AP under the demo's
qrels restricted to the pool and the run's own top 20 (the documents judging it would
add); the model alone counted its unpooled documents at about twice the truth.

* before any top-up, its interval covers the truth, and says how much of the width is
  the model's error on its unpooled documents;
* after a top-up of at most 10 documents per topic judged from the demo's truth, its
  estimate is within 0.05 of the truth and below ``demo-one-term``;
* the pooled runs' figures do not change, with or without the new run and its top-up.
"""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.suite_runs import qrels_read
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.evaluation.services import new_runs
from nuggets_app.evaluation.services.estimates import EstimateError, estimate_sample
from nuggets_app.evaluation.services.outside_pool import fewer_topics
from nuggets_app.evaluation.services.top_ups import (
    stored_top_ups,
    top_up_draw_sample,
    top_up_statuses,
)
from nuggets_app.ir.measures import run_evaluate
from nuggets_app.ir.prels import ranking_order
from nuggets_app.models import JobNewRun, Judgment, Sample, SampleDocument
from tests.integration.evaluation.test_one_path_demo import (  # noqa: F401
    UNJUDGED,
    demo_job,
)

pytestmark = pytest.mark.django_db
NAME = "adversarial"


def adversarial_run(job, pooled):
    """``demo-bm25-noisy`` reversed, ten documents outside the pool first."""
    in_pool = {d for run in pooled.values() for docs in run.values() for d in docs}
    others = sorted(
        set(job.collection.documents.values_list("docno", flat=True)) - in_pool
    )
    out = {}
    for qid, docs in pooled["demo-bm25-noisy"].items():
        ranking = [*others[:10], *reversed(ranking_order(docs))]
        out[qid] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    return out


def truth_map(run, pooled, depth, topics):
    """MAP under the demo's qrels, over ``topics``, of the pool plus the run's own
    top ``depth``."""
    qrels = qrels_read(DATA_DIR / "qrels.txt")
    in_pool = {
        q: {d for r in pooled.values() for d in ranking_order(r.get(q, {}))[:depth]}
        for q in topics
    }
    seen = {q: in_pool[q] | set(ranking_order(run[q])[:depth]) for q in topics}
    judged = {
        q: {d: g for d, g in qrels.get(q, {}).items() if d in seen[q]} for q in topics
    }
    return run_evaluate(judged, {q: run[q] for q in topics}, measures=["AP"]).mean["AP"]


def test_the_adversarial_run_is_covered_then_made_exact_by_a_top_up(demo_job):  # noqa: F811
    job, sample = demo_job
    pooled = new_runs.job_pool_runs(job)
    page, _, _ = new_runs.job_runs_estimates(job=job, sample=sample)
    run = adversarial_run(job, pooled)
    found = new_runs.new_runs_evaluate(
        job=job, sample=sample, new_runs={NAME: run}, inline_max=10**6
    )
    assert found.estimates is not None
    estimate = found.estimates[NAME].ap
    topics = [t.qid for t in estimate.topics]
    truth = truth_map(run, pooled, found.depth, topics)
    parts = found.intervals[NAME]
    assert found.calibration is not None
    low, high = estimate.ci95
    assert low <= truth <= high
    assert parts.var_model > 0
    assert parts.documents > 0
    # Kept, and topped up with at most 10 documents per topic judged from the truth.
    kept = new_runs.new_run_keep(job=job, sample=sample, name=NAME, scores=run)
    alice = get_user_model().objects.get(username="alice")
    top_up = top_up_draw_sample(job=job, run=kept, size=10, seed=1)
    (status,) = top_up_statuses(run=kept)
    assert status.judged == 0
    assert status.documents > 0
    qrels = qrels_read(DATA_DIR / "qrels.txt")
    rows = SampleDocument.objects.filter(sample=top_up).select_related(
        "topic", "document"
    )
    per_topic: dict[str, int] = {}
    for row in rows:
        per_topic[row.topic.qid] = per_topic.get(row.topic.qid, 0) + 1
    assert max(per_topic.values()) <= 10
    Judgment.objects.bulk_create(
        Judgment(
            topic=row.topic,
            document=row.document,
            assessor=alice,
            relevance=qrels.get(row.topic.qid, {}).get(row.document.docno, 0),
        )
        for row in rows
    )
    assert set(stored_top_ups(job=job, names=[NAME])[NAME]) == set(per_topic)
    after, new, _ = new_runs.job_runs_estimates(job=job, sample=sample)
    assert new == {NAME}
    figure = after[NAME].ap
    print(
        "after",
        figure.estimate,
        figure.ci95,
        "one-term",
        after["demo-one-term"].ap.estimate,
    )
    assert abs(figure.estimate - truth) <= 0.05
    assert figure.estimate < after["demo-one-term"].ap.estimate
    assert figure.ci95[0] <= truth <= figure.ci95[1]
    # The pooled runs' figures are those of the runs page before.
    assert {n: after[n] for n in pooled} == page


def test_runs_that_cannot_be_compared_are_refused_or_marked(demo_job):  # noqa: F811
    job, sample = demo_job
    pooled = new_runs.job_pool_runs(job)
    nowhere = {"999": {"d1": 1.0}, "998": {"d2": 1.0}}
    with pytest.raises(EstimateError, match=r"answers none of the \d+ topics of job"):
        new_runs.new_runs_evaluate(job=job, sample=sample, new_runs={"x": nowhere})
    with pytest.raises(EstimateError, match="answers none"):
        new_runs.new_run_keep(job=job, sample=sample, name="x", scores=nowhere)
    assert not JobNewRun.objects.filter(job=job, name="x").exists()
    # Two topics of the job (one of them without a judged document) and one outside.
    run = adversarial_run(job, pooled)
    judged = next(q for q in sorted(run) if q != UNJUDGED)
    partial = {judged: run[judged], UNJUDGED: run[UNJUDGED], "999": {"d1": 1.0}}
    found = new_runs.new_runs_evaluate(
        job=job, sample=sample, new_runs={"partial": partial}, inline_max=10**6
    )
    counts = found.documents["partial"]
    assert (counts.topics_outside_job, counts.topics_unjudged) == (1, 1)
    assert found.estimates is not None
    beside = {**new_runs.job_runs_estimates(job=job, sample=sample)[0]}
    beside["partial"] = found.estimates["partial"]
    most = max(e.ap.n_topics for e in beside.values())
    assert fewer_topics(beside, {"partial"}) == {"partial": f"1 of {most} topics"}
    rows = dict((m, v) for m, _, v in new_runs.new_run_rows(found, "partial"))
    assert rows["topics_outside_job"] == 1
    assert rows["topics_unjudged"] == 1
    assert rows["docs_model_alone"] > 0
    assert rows["ma_var_model"] > 0


def test_the_sample_command_draws_a_top_up_for_a_kept_run(demo_job):  # noqa: F811
    job, sample = demo_job
    run = adversarial_run(job, new_runs.job_pool_runs(job))
    with pytest.raises(CommandError, match="no new run"):
        call_command("sample", "--top-up", "--job", str(job.pk), "--run", NAME,
                     "--size", "3")  # fmt: skip
    new_runs.new_run_keep(job=job, sample=sample, name=NAME, scores=run)
    new_runs.new_runs_evaluate(
        job=job, sample=sample, new_runs={NAME: run}, inline_max=10**6
    )
    with pytest.raises(CommandError, match="--top-up needs"):
        call_command("sample", "--top-up", "--job", str(job.pk))
    # The service names the top-up size; the command adds its flag.
    with pytest.raises(
        CommandError, match=r"the top-up size must be between 1 and .* \(--size\)$"
    ):
        call_command(
            "sample",
            "--top-up",
            "--job",
            str(job.pk),
            "--run",
            NAME,
            "--size",
            "1000000",
        )
    out = io.StringIO()
    call_command(
        "sample", "--top-up", "--job", str(job.pk), "--run", NAME, "--size", "3",
        "--assessors", "alice", stdout=out,
    )  # fmt: skip
    top_up = Sample.objects.get(method=Sample.Method.TOP_UP, new_run__name=NAME)
    assert "top_up, 3 per topic" in out.getvalue()
    rows = SampleDocument.objects.filter(sample=top_up)
    per_topic: dict[int, int] = {}
    for row in rows:
        per_topic[row.topic_id] = per_topic.get(row.topic_id, 0) + 1
        assert 0 < row.inclusion_prob <= 1
    assert max(per_topic.values()) <= 3
    assert set(top_up.assignments.values_list("assessor__username", flat=True)) == {
        "alice"
    }
    # A top-up is never the pool's sample: not offered for estimates or fits.
    assert estimate_sample(job) != top_up
