"""A run that never contributed to the pool, evaluated against a finished job: its
unpooled documents scored as the job's chunks score theirs and kept, documents outside
the collection counted, estimates beside the pooled runs."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command

from nuggets_app.evaluation.services import new_runs as service
from nuggets_app.evaluation.services.estimates import EstimateError
from nuggets_app.inference.services import unpooled
from nuggets_app.inference.services.job_model import job_features
from nuggets_app.models import Document, MatchJob, PoolDocument, UnpooledScore

pytestmark = pytest.mark.django_db

NEW = "new-system"
MISSING = "NOT-IN-COLLECTION"


def new_run(world) -> dict[str, dict[str, float]]:
    """Per topic: the pooled documents of a pooled run, then documents of the
    collection outside the pool (ranks 11-20 of the runs), then one unknown docno."""
    pooled = set(
        PoolDocument.objects.filter(pool=world.pool).values_list(
            "topic__qid", "document__docno"
        )
    )
    run: dict[str, dict[str, float]] = {}
    for qid in sorted(world.topics):
        docs = []
        for scores in world.file_runs.values():
            for docno in sorted(scores.get(qid, {}), key=lambda d: -scores[qid][d]):
                if docno not in docs:
                    docs.append(docno)
        inside = [d for d in docs if (qid, d) in pooled][:5]
        outside = [d for d in docs if (qid, d) not in pooled][:5]
        ranked = [*outside[:2], *inside, *outside[2:], MISSING]
        run[qid] = {d: float(100 - i) for i, d in enumerate(ranked)}
    return run


def _expected_counts(world, run) -> tuple[int, int, int]:
    pooled = set(
        PoolDocument.objects.filter(pool=world.pool).values_list(
            "topic__qid", "document__docno"
        )
    )
    unpooled_count = sum(
        1
        for q, docs in run.items()
        for d in docs
        if d != MISSING and (q, d) not in pooled
    )
    inside = sum(1 for q, docs in run.items() for d in docs if (q, d) in pooled)
    return inside, unpooled_count, len(run)


def test_a_new_run_is_estimated_beside_the_pooled_runs(fitted):
    world = fitted
    run = new_run(world)
    found = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NEW: run}
    )
    inside, outside, missing = _expected_counts(world, run)
    counts = found.documents[NEW]
    assert (counts.pooled, counts.unpooled, counts.not_in_collection) == (
        inside,
        outside,
        missing,
    )
    assert counts.below_depth == 0
    assert outside > 0
    assert UnpooledScore.objects.filter(job=world.job).count() == outside
    assert found.new == {NEW}
    assert set(found.estimates) == {NEW, *world.file_runs}
    estimate = found.estimates[NEW].ap
    assert estimate.ci95[0] <= estimate.estimate <= estimate.ci95[1]
    assert estimate.n_topics > 0


def test_a_second_evaluation_scores_nothing_again(fitted, monkeypatch):
    world = fitted
    run = new_run(world)
    first = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NEW: run}
    )

    def refuse(**_):
        raise AssertionError("scored again")

    monkeypatch.setattr(unpooled, "unpooled_score", refuse)
    second = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NEW: run}
    )
    assert second.estimates[NEW].ap.estimate == first.estimates[NEW].ap.estimate


def test_unpooled_documents_are_scored_as_the_jobs_chunks_score_theirs(fitted):
    world = fitted
    features = job_features(world.job)
    topic_id, (ids, matrix) = next(iter(sorted(features.items())))
    chosen = [int(d) for d in ids[:4]]
    unpooled.unpooled_score(job=world.job, topic_id=topic_id, document_ids=chosen)
    rows = dict(
        UnpooledScore.objects.filter(job=world.job, topic_id=topic_id).values_list(
            "document_id", "features"
        )
    )
    for i, doc_id in enumerate(chosen):
        again = np.frombuffer(bytes(rows[doc_id]), dtype="<f8")
        np.testing.assert_allclose(again, matrix[i], rtol=1e-12, atol=1e-12)


def test_a_pooled_run_under_another_name_gets_its_pooled_estimate(fitted):
    world = fitted
    name = sorted(world.file_runs)[0]
    copy = {q: dict(d) for q, d in world.file_runs[name].items()}
    found = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={"copy": copy}
    )
    assert found.estimates["copy"].ap.estimate == pytest.approx(
        found.estimates[name].ap.estimate, abs=1e-12
    )


def test_many_unpooled_documents_go_to_the_workers(
    fitted, django_capture_on_commit_callbacks
):
    world = fitted
    run = new_run(world)
    with django_capture_on_commit_callbacks(execute=True) as sent:
        found = service.new_runs_evaluate(
            job=world.job, sample=world.sample, new_runs={NEW: run}, inline_max=0
        )
    assert found.estimates is None
    assert not found.progress.done
    assert len(sent) == 1  # one callback sends every batch
    assert found.progress.queued_batches == len(found.wanted)
    # The eager tasks ran on commit: every document is now scored.
    progress = unpooled.unpooled_progress(job=world.job, wanted=found.wanted)
    assert progress.done
    assert progress.wanted == found.documents[NEW].unpooled


def test_a_new_run_named_as_a_pooled_one_beside_it_is_refused(fitted):
    world = fitted
    name = sorted(world.file_runs)[0]
    with pytest.raises(EstimateError, match=f"run {name} is already in the pool"):
        service.new_runs_evaluate(
            job=world.job, sample=world.sample, new_runs={name: new_run(world)}
        )


def test_evaluate_prints_the_new_runs_documents_and_the_rule(fitted, tmp_path):
    world = fitted
    run = new_run(world)
    path = tmp_path / "new.run"
    lines = []
    for qid, docs in run.items():
        for i, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1):
            lines.append(f"{qid} Q0 {d} {i} {s} {NEW}\n")
    path.write_text("".join(lines))
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "evaluate", "--job", str(world.job.pk), str(path), stdout=out, stderr=err
    )
    values = {
        tuple(line.split("\t")[:2]): line.split("\t")[2]
        for line in out.getvalue().splitlines()
    }
    inside, outside, missing = _expected_counts(world, run)
    assert values[("pooled", "all")] == "0"
    assert values[("docs_unpooled", "all")] == str(outside)
    assert values[("docs_pooled", "all")] == str(inside)
    assert values[("docs_not_in_collection", "all")] == str(missing)
    assert "maAP_ci_low" in {m for m, _ in values}
    assert service.NEW_RUN_NOTE in err.getvalue()
    assert service.NOT_IN_COLLECTION_RULE in err.getvalue()
    assert Document.objects.filter(docno=MISSING).count() == 0


def _upload(run, name=NEW):
    from django.core.files.uploadedfile import SimpleUploadedFile

    lines = []
    for qid, docs in run.items():
        for i, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1):
            lines.append(f"{qid} Q0 {d} {i} {s} {name}\n")
    return SimpleUploadedFile("new.run", "".join(lines).encode())


def test_a_researcher_uploads_a_run_and_sees_it_beside_the_pooled_runs(
    fitted, client, researcher
):
    from django.urls import reverse

    world = fitted
    client.force_login(researcher)
    url = reverse("job-new-run", args=[world.job.pk])
    assert client.get(url).status_code == 200
    page = client.post(url, {"run": _upload(new_run(world))}, follow=True)
    html = page.content.decode()
    assert page.status_code == 200
    (kept,) = world.job.new_runs.all()
    assert page.redirect_chain == [
        (reverse("job-new-run-kept", args=[world.job.pk, kept.pk]), 302)
    ]
    assert "not in the pool" in html
    assert html.count("<mark>not in the pool</mark>") == 1
    for name in world.file_runs:
        assert f'<th scope="row">{name}</th>' in html
    assert "did not contribute to the pool: its documents outside the pool" in html
    assert "count as non-relevant (p = 0)" in html
    # What the figures count: the pool's and the run's own relevant documents.
    assert "documents no run retrieved that deep" in html


def test_a_bad_run_file_is_refused_with_every_bad_line(fitted, client, researcher):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client.force_login(researcher)
    bad = SimpleUploadedFile(
        "bad.run",
        b"1 Q0 d1 1 2.0 tag\n1 Q0 d2 2\n1 Q0 d3 3 high tag\n1 Q0 d4 4 1.0 other\n",
    )
    page = client.post(reverse("job-new-run", args=[fitted.job.pk]), {"run": bad})
    assert page.status_code == 200
    html = page.content.decode()
    assert "bad.run: 3 problems, nothing kept" in html
    for line in ("bad.run:2", "bad.run:3", "bad.run:4"):
        assert line in html
    assert not fitted.job.new_runs.exists()


def test_an_assessor_may_not_evaluate_anew_run(fitted, client, assessor):
    from django.urls import reverse

    client.force_login(assessor)
    page = client.get(reverse("job-new-run", args=[fitted.job.pk]))
    assert page.status_code == 403


def test_many_documents_are_scored_by_the_workers_while_the_page_waits(
    fitted, client, researcher, monkeypatch, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    world = fitted
    monkeypatch.setattr(service, "UNPOOLED_INLINE", 0)
    client.force_login(researcher)
    url = reverse("job-new-run", args=[world.job.pk])
    sent = []
    monkeypatch.setattr(
        "nuggets_app.operations.queue.task_enqueue", lambda *a: sent.append(a)
    )
    with django_capture_on_commit_callbacks(execute=True):
        page = client.post(url, {"run": _upload(new_run(world))})
    assert page.status_code == 302
    batches = len(sent)
    waiting = client.get(page["Location"])
    assert "documents scored by the workers" in waiting.content.decode()
    assert len(sent) == batches  # polling sends nothing again
    for _name, job_id, topic_id, docs in sent:
        unpooled.unpooled_score(
            job=MatchJob.objects.get(pk=job_id), topic_id=topic_id, document_ids=docs
        )
    done = client.get(page["Location"]).content.decode()
    assert "<mark>not in the pool</mark>" in done


def test_after_a_rescoring_unpooled_documents_are_described_as_the_pool_is(fitted):
    from nuggets_app.inference.services.matching import match_job_rescore
    from nuggets_app.models import MatchResult

    world = fitted
    features = job_features(world.job)
    # Documents the nuggets match, whose min-span features depend on lambda.
    matched = MatchResult.objects.filter(job=world.job, score__gt=0).first()
    topic_id = matched.topic_id
    ids, matrix = features[topic_id]
    positive = set(
        MatchResult.objects.filter(
            job=world.job, topic_id=topic_id, score__gt=0
        ).values_list("document_id", flat=True)
    )
    at = [i for i, d in enumerate(ids.tolist()) if d in positive][:4]
    match_job_rescore(job=world.job, lam=0.9)
    chosen = [int(ids[i]) for i in at]
    unpooled.unpooled_score(job=world.job, topic_id=topic_id, document_ids=chosen)
    rows = dict(
        UnpooledScore.objects.filter(job=world.job, topic_id=topic_id).values_list(
            "document_id", "features"
        )
    )
    for i, doc_id in zip(at, chosen, strict=True):
        again = np.frombuffer(bytes(rows[doc_id]), dtype="<f8")
        np.testing.assert_allclose(again, matrix[i], rtol=1e-12, atol=1e-12)
