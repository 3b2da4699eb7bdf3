"""One path on the demo data, as a new user meets it (``make run``): alice judged the
sample of every topic but topic 4, and a matching job ran over the demo pool.

* the unjudged topic gets no p, no inferred line and no estimate, under every rule;
* the pooled runs' figures are the same on the runs page and beside a new run;
* a run's bias verdict is the same alone and beside all runs;
* the job page, the evaluate page and the exports share one default rule.
"""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from assessor_ui.views.evaluation import RuleFields
from assessor_ui.views.jobs import RuleForm
from nuggets_app.collection.services.suite_runs import qrels_read
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.evaluation.services import estimates, new_runs
from nuggets_app.inference.services import decision_rule, readiness
from nuggets_app.inference.services.exports import probabilistic_export, qrels_export
from nuggets_app.inference.services.job_model import (
    features_cache_clear,
    job_model_fit,
    job_probabilities,
)
from nuggets_app.inference.services.matching import (
    chunks,
    launch,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.models import Collection, Judgment, MatchJob, Sample, SampleDocument

pytestmark = pytest.mark.django_db
UNJUDGED = "4"


@pytest.fixture
def demo_job(monkeypatch):
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    collection = Collection.objects.get(name="demo")
    sample = Sample.objects.get(name="demo-statap15")
    alice = get_user_model().objects.get(username="alice")
    truth = qrels_read(DATA_DIR / "qrels.txt")
    rows = SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    )
    Judgment.objects.bulk_create(
        Judgment(
            topic=row.topic,
            document=row.document,
            assessor=alice,
            relevance=truth.get(row.topic.qid, {}).get(row.document.docno, 0),
        )
        for row in rows
        if row.topic.qid != UNJUDGED
    )
    job = match_job_launch(
        collection=collection,
        topics=list(collection.topics.all()),
        source=MatchJob.Source.POOL,
        pool=sample.pool,
    )
    job = match_job_finish_here(job)
    features_cache_clear()
    job_model_fit(job=job)
    return job, sample


def test_the_unjudged_topic_gets_nothing_inferred_under_any_rule(demo_job):
    job, sample = demo_job
    topic = job.topics.get(qid=UNJUDGED)
    assert topic.pk not in job_probabilities(job=job)
    assert job.inference.fit_sample == sample
    assert [t.qid for t in readiness.topics_unjudged(job)] == [UNJUDGED]
    for rule in (
        readiness.rule_default(job),
        decision_rule.DecisionRule(kind="threshold", threshold=0.0),
        decision_rule.DecisionRule(kind="top_n", n=5),
        decision_rule.DecisionRule(kind="expected_f1"),
    ):
        for kind in ("inferred", "merged"):
            export = qrels_export(
                collection=job.collection, kind=kind, job=job, rule=rule
            )
            assert not [x for x in export.lines if x.split()[0] == UNJUDGED]
            assert export.provenance["undecided_reasons"][UNJUDGED] == (
                readiness.UNJUDGED_REASON
            )
    prob = probabilistic_export(job=job)
    assert not [x for x in prob.lines if x.split()[0] == UNJUDGED]
    assert prob.provenance["undecided_topics"] == [UNJUDGED]
    # Every sentence the job page says about such topics holds under every rule.
    (warning,) = [w for w in readiness.launch_warnings(job) if UNJUDGED in w]
    assert "no rule infers anything for them" in warning
    found = estimates.job_sample_estimates(
        job=job, sample=sample, runs=new_runs.job_pool_runs(job)
    )
    for estimate in found.values():
        assert UNJUDGED not in {t.qid for t in estimate.ap.topics}


def test_pooled_figures_and_bias_verdicts_do_not_depend_on_other_runs(demo_job):
    job, sample = demo_job
    pooled = new_runs.job_pool_runs(job)
    page, new, pending = new_runs.job_runs_estimates(job=job, sample=sample)
    assert (new, pending) == (frozenset(), [])
    assert set(page) == set(pooled)
    # A new run built to reach outside the pool: its unpooled documents enter its own
    # estimate only.
    in_pool = {d for run in pooled.values() for docs in run.values() for d in docs}
    others = sorted(
        set(job.collection.documents.values_list("docno", flat=True)) - in_pool
    )
    outside = {
        qid: {
            docno: -float(rank)
            for rank, docno in enumerate([*others[:10], *sorted(docs)])
        }
        for qid, docs in pooled["demo-one-term"].items()
    }
    beside = new_runs.new_runs_evaluate(
        job=job, sample=sample, new_runs={"outside": outside}
    )
    assert beside.estimates is not None
    assert beside.documents["outside"].unpooled > 0
    for name in pooled:
        assert beside.estimates[name] == page[name]
    # Kept, the new run gets the same figure on the runs page.
    new_runs.new_run_keep(job=job, sample=sample, name="outside", scores=outside)
    again, new, _ = new_runs.job_runs_estimates(job=job, sample=sample)
    assert new == {"outside"}
    assert again["outside"] == beside.estimates["outside"]
    assert {n: again[n] for n in pooled} == page
    # One run alone gets the verdict it gets beside every run.
    for name, run in pooled.items():
        alone = estimates.job_sample_estimates(
            job=job, sample=sample, runs={name: run}
        )[name]
        assert alone == page[name]
    checks = [e.check for e in page.values()]
    assert len({c.shift for c in checks}) == 1


def test_one_default_rule_for_the_job_page_the_evaluate_page_and_exports(
    demo_job, tmp_path
):
    job, _ = demo_job
    default = readiness.rule_default(job)
    assert default == decision_rule.DecisionRule(kind="probability", threshold=0.5)
    assert RuleForm(job=job).rule() == default
    form = RuleFields(data={"kind": "default", "threshold": 0.5, "n": 100})
    assert form.is_valid()
    assert form.rule() is None  # resolved to each job's rule_default
    path = tmp_path / "merged.qrels"
    call_command(
        "export_qrels", "--collection", "demo", "--kind", "merged", "--job",
        str(job.pk), "--output", str(path), stdout=io.StringIO(),
        stderr=io.StringIO(),
    )  # fmt: skip
    sidecar = json.loads(path.with_name(path.name + ".provenance.json").read_text())
    assert sidecar["rule"] == default.as_dict()
    assert sidecar["rule_text"] == "p >= 0.5"
    assert sidecar["relevance"] == "relevant at grade >= 1"
