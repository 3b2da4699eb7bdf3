"""A nugget bank nobody judged with: Cranfield, a bank of 16 nuggets imported for 12
topics, a whole-collection job, and no judgment at all.

* the paper rule decides every topic with nuggets: ``export_qrels --kind inferred
  --rule paper:0.5`` writes exactly the pairs the matcher library scores >= 0.5;
* rules on the model's p say there is no judged document; so do the topic pages;
* the finished job says there is nothing to fit, and lists its topics by number.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from matcher import MatchOptions, NuggetSpec, TopicMatcher
from nuggets_app.collection.services.imports import collection_import, topics_import
from nuggets_app.inference.services.matching import (
    chunks,
    launch,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.inference.tasks import match_job_fit
from nuggets_app.models import Collection, Document, Judgment, MatchJob

pytestmark = pytest.mark.django_db
QIDS = [str(n) for n in range(1, 13)]


@pytest.fixture
def bank_job(shared_data, monkeypatch):
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    monkeypatch.setattr(chunks, "enqueue_fit", lambda job_id: None)
    base = shared_data / "cranfield"
    collection_import(path=base / "docs.jsonl.gz", name="cranfield")
    topics_import(path=base / "topics.jsonl", collection="cranfield")
    call_command(
        "import_nuggets", str(base / "nuggets-bank.jsonl"), "--collection",
        "cranfield", stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    collection = Collection.objects.get(name="cranfield")
    job = match_job_launch(
        collection=collection,
        topics=list(collection.topics.filter(qid__in=QIDS)),
        source=MatchJob.Source.COLLECTION,
    )
    job = match_job_finish_here(job)
    assert match_job_fit(job.pk)["status"] == "failed"
    assert not Judgment.objects.exists()
    return job, base


def _expected(base) -> set[tuple[str, str]]:
    """The pairs the matcher library itself scores >= 0.5 (k 3, lambda 0.5)."""
    nuggets: dict[str, list[NuggetSpec]] = {}
    for line in (base / "nuggets-bank.jsonl").read_text().splitlines():
        row = json.loads(line)
        nuggets.setdefault(row["qid"], []).append(NuggetSpec(row["id"], row["text"]))
    texts = dict(Document.objects.values_list("docno", "text"))
    out = set()
    for qid, specs in nuggets.items():
        matcher = TopicMatcher(specs, MatchOptions(k=3, lam=0.5))
        out |= {
            (qid, d) for d, text in texts.items() if matcher.score(text).score >= 0.5
        }
    return out


def test_the_paper_rule_decides_a_bank_nobody_judged(bank_job, tmp_path):
    job, base = bank_job
    path = tmp_path / "inferred.qrels"
    call_command(
        "export_qrels", "--collection", "cranfield", "--kind", "inferred", "--job",
        str(job.pk), "--rule", "paper:0.5", "-o", str(path),
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    lines = [x.split() for x in path.read_text().splitlines()]
    relevant = {(q, d) for q, _, d, rel in lines if rel == "1"}
    expected = _expected(base)
    assert relevant == expected
    assert len(expected) >= 10
    sidecar = json.loads(path.with_name(path.name + ".provenance.json").read_text())
    # Only the topics without nuggets (3, 4 and 11) are undecided.
    assert sidecar["undecided_topics"] == ["3", "4", "11"]
    assert set(sidecar["undecided_reasons"].values()) == {"no judged document"}
    decided = {q for q, *_ in lines}
    assert decided == set(QIDS) - {"3", "4", "11"}

    for kind in ("inferred", "probabilistic"):
        with pytest.raises(CommandError, match="no document of its topics is judged"):
            call_command(
                "export_qrels", "--collection", "cranfield", "--kind", kind,
                "--job", str(job.pk), "--rule", "p:0.5",
                stdout=io.StringIO(), stderr=io.StringIO(),
            )  # fmt: skip


def test_pages_say_why_model_rules_cannot_decide(bank_job, staff_client):
    job, _ = bank_job
    detail = staff_client.get(reverse("job-detail", args=[job.pk])).text
    assert "Nothing to fit: no document of the job's topics is judged" in detail
    assert "Not fitted yet" not in detail
    assert "topics 1, 2, 5, 6, 7, 8, 9, 10, 12 have nuggets but no judged" in detail
    listed = re.findall(rf'href="/jobs/{job.pk}/qid/([^/"]+)/"', detail)
    assert listed == QIDS
    page = staff_client.get(reverse("job-topic", args=[job.pk, "1"])).text
    assert "This topic has no nuggets" not in page
    assert "No document of this topic is judged, so the relevance model" in page
    assert "the paper rule decides it from its nuggets" in page
    model = staff_client.get(
        reverse("job-topic", args=[job.pk, "1"]), {"kind": "probability"}
    ).text
    assert f"job {job.pk} has no relevance model: no document of its topics is" in model
    bare = staff_client.get(reverse("job-topic", args=[job.pk, "3"])).text
    assert "This topic has no judged document and no nuggets" in bare
