"""``match --bank`` over TREC TS, QA and RAG nugget banks (nuggets without a source
document) runs to the end on a real worker, its relevance model is fitted, and its
inferred qrels come from the bank's nuggets only; the model counts such nuggets for
every document (no leave-one-out), and the job's pages show them."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from nuggets_app.inference.services import job_model as relevance
from nuggets_app.inference.services.job_model import (
    features_unpack,
    job_model_fit,
    job_probabilities,
)
from nuggets_app.inference.services.matching import MatchParams, match_job_launch
from nuggets_app.learning.relevance_features import FEATURE_NAMES
from nuggets_app.models import JobInference, MatchJob, MatchResult, Nugget, Topic
from tests.integration.worlds.cranfield_pool import run_inline, wait_until
from tests.integration.worlds.nugget_banks import bank_world


def _inferred(world, job: MatchJob, rule: str, tmp_path) -> dict:
    """The provenance sidecar of ``export_qrels --kind inferred`` under ``rule``."""
    path = tmp_path / f"inferred-{rule.replace(':', '-')}.qrels"
    call_command(
        "export_qrels", "--collection", world.collection.name, "--kind", "inferred",
        "--job", str(job.pk), "--rule", rule, "--output", str(path),
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    side = path.with_name(path.name + ".provenance.json")
    return json.loads(side.read_text())


@pytest.mark.worker
@pytest.mark.timeout(180)
@pytest.mark.parametrize("bank", ["ts", "qa", "rag"])
def test_a_bank_without_source_documents_is_matched_to_the_end_on_a_worker(
    transactional_db, celery_worker, shared_data, assessor, settings, tmp_path, bank
):
    settings.MATCH_CHUNK_SIZE = 10
    world = bank_world(shared_data, tmp_path, assessor)
    _path, _format, qids = world.banks[bank]
    bank_nuggets = set(
        Nugget.objects.filter(bank__name=bank, topic__qid__in=qids).values_list(
            "pk", flat=True
        )
    )
    assert bank_nuggets
    assert not Nugget.objects.filter(pk__in=bank_nuggets, document__isnull=False)

    out = StringIO()
    call_command(
        "match", "--collection", world.collection.name, "--bank", bank,
        "--all-docs", "--topics", *qids, "--wait", "--verbosity", "0",
        stdout=out, stderr=StringIO(),
    )  # fmt: skip
    job = MatchJob.objects.get()
    assert job.status == MatchJob.Status.DONE, job.error
    assert job.nugget_filter == {"banks": [world.bank_pk(bank)]}
    documents = world.collection.documents.count()
    assert (job.docs_done, job.docs_total) == (len(qids) * documents,) * 2

    # Every match is one of the bank's nuggets, never the assessor's highlight.
    matched = set(
        MatchResult.objects.filter(job=job, nugget__isnull=False).values_list(
            "nugget_id", flat=True
        )
    )
    assert matched
    assert matched <= bank_nuggets

    # The relevance model is fitted on the judgments, with features from the bank.
    wait_until(
        lambda: (
            JobInference.objects.filter(job=job).exclude(model=None, error="").exists()
        ),
        timeout=90,
        what="the model fit",
    )
    info = JobInference.objects.get(job=job)
    assert info.error == ""
    assert info.fit_info["judged"] == 3 * len(qids)
    assert info.fit_info["relevant"] == len(qids)
    probabilities = job_probabilities(job=job, override=False)
    assert len(probabilities) == len(qids)

    for rule in ("paper:0.5", "p:0.5"):
        provenance = _inferred(world, job, rule, tmp_path)
        assert provenance["undecided_topics"] == []
        lines = provenance["lines"]
        assert {line["qid"] for line in lines} == set(qids)
        used = {line["nugget"] for line in lines} - {None}
        assert used <= bank_nuggets, rule
        assert world.assessor_nugget.pk not in used
    # Under the paper rule, each topic's unjudged documents that state one of its
    # nuggets are inferred relevant, through one of the bank's nuggets.
    # nuggets are inferred relevant, through one of the bank's nuggets; no answer of
    # another topic is.
    provenance = _inferred(world, job, "paper:0.5", tmp_path)
    # (A judged document's line is the person's, whatever the rule.)
    relevant = [
        line
        for line in provenance["lines"]
        if line["rel"] > 0 and line["source"] != "person"
    ]
    assert all(line["nugget"] in bank_nuggets for line in relevant)
    for qid in qids:
        found = {line["docno"] for line in relevant if line["qid"] == qid}
        own = set(world.own[qid]) - set(world.judged[qid])
        assert found & own, qid
        others = {d for q, docs in world.own.items() if q != qid for d in docs}
        assert not found & others, qid


@pytest.mark.django_db
def test_bank_nuggets_count_for_every_document_and_a_highlight_not_for_its_source(
    shared_data, assessor, tmp_path, settings, staff_client
):
    settings.MATCH_CHUNK_SIZE = 10
    relevance.features_cache_clear()
    world = bank_world(shared_data, tmp_path, assessor)
    topic = Topic.objects.get(collection=world.collection, qid="TS14.25")
    job = match_job_launch(
        collection=world.collection,
        topics=[topic],
        source="collection",
        params=MatchParams(
            nugget_filter={"banks": [world.bank_pk("ts")], "assessors": [assessor.pk]}
        ),
    )
    run_inline(job)
    bank = set(
        Nugget.objects.filter(bank__name="ts", topic=topic).values_list("pk", flat=True)
    )
    source = world.assessor_nugget.document

    evidence = relevance.topic_evidence_load(job=job, topic_id=topic.pk)
    assert evidence.nugget_count == len(bank) + 1
    # Only the highlight has a source document, left out of its features.
    assert dict(evidence.own_nugget_count) == {source.docno: 1}
    assert {evidence.nugget_sources[str(pk)] for pk in bank} == {None}
    assert evidence.nugget_sources[str(world.assessor_nugget.pk)] == source.docno

    # Every document gets features; the bank's nuggets describe the topic's own
    # documents (nugget BM25 above 0 for each, min-span scores for most).
    rows = [
        features_unpack(bytes(blob))
        for blob in job.chunks.values_list("packed_features", flat=True)
    ]
    ids = np.concatenate([r[0] for r in rows])
    matrix = np.concatenate([r[1] for r in rows])
    assert sorted(ids.tolist()) == sorted(
        world.collection.documents.values_list("pk", flat=True)
    )
    own = set(
        world.collection.documents.filter(docno__in=world.own["TS14.25"]).values_list(
            "pk", flat=True
        )
    )
    mask = np.isin(ids, list(own))
    assert np.all(matrix[mask, FEATURE_NAMES.index("nugget_bm25")] > 0)
    assert np.mean(matrix[mask, FEATURE_NAMES.index("minspan_mean")] > 0) > 0.5

    summary = job_model_fit(job=job)
    assert (summary.judged, summary.relevant) == (3, 1)
    # The job's pages show the bank's nuggets with their provenance.
    result = (
        MatchResult.objects.filter(job=job, nugget_id__in=bank)
        .order_by("-score", "document_id")
        .first()
    )
    for url in (
        reverse("job-detail", args=[job.pk]),
        reverse("job-topic", args=[job.pk, topic.qid]),
        reverse("job-topic", args=[job.pk, topic.qid]) + "?kind=probability",
    ):
        assert staff_client.get(url).status_code == 200, url
    page = staff_client.get(
        reverse("job-document", args=[job.pk, topic.qid, result.document_id])
    )
    assert "imported from nuggets.tsv.gz" in page.content.decode()
