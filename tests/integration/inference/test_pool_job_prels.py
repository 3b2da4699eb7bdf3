"""prels need a sample's inclusion probabilities, so a job over a pool has none: on
the demo, whose launch form preselects its only sample, a job launched over the pool
is a pool job (no sample kept), the job page offers no prels and ``export_qrels
--kind prels --job N`` refuses them, naming ``--sample`` (as the manual says)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from nuggets_app.inference.services.matching import launch
from nuggets_app.models import Collection, MatchJob, Sample

pytestmark = pytest.mark.django_db


def test_a_pool_job_launched_beside_the_preselected_sample_has_no_prels(
    monkeypatch, staff_client, tmp_path
):
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    collection = Collection.objects.get(name="demo")
    sample = Sample.objects.get(name="demo-statap15")
    form = staff_client.get(reverse("job-launch")).text
    assert f'<option value="{sample.pk}" selected>' in form  # what the browser posts
    staff_client.post(
        reverse("job-launch"),
        {
            "collection": collection.pk, "source": "pool", "pool": sample.pool.pk,
            "sample": sample.pk, "topics": "1", "k": 3, "lam": 0.5, "stem": "porter",
            "stopwords": "default", "grades": "", "aspects": "", "name": "",
        },
    )  # fmt: skip
    job = MatchJob.objects.get()
    assert (job.source, job.pool_id, job.sample_id) == ("pool", sample.pool.pk, None)
    prels = reverse("job-export", args=[job.pk, "prels"])
    assert prels not in staff_client.get(reverse("job-detail", args=[job.pk])).text
    assert staff_client.get(prels).status_code == 409
    with pytest.raises(
        CommandError, match=r"ran over pool, not a sample; name a sample \(--sample\)"
    ):
        call_command(
            "export_qrels", "--collection", "demo", "--kind", "prels", "--job",
            str(job.pk), "-o", str(tmp_path / "job.prels"),
        )  # fmt: skip
    # A pool job stored with a sample before launches dropped it: no prels either.
    MatchJob.objects.filter(pk=job.pk).update(sample=sample)
    job.refresh_from_db()
    assert prels not in staff_client.get(reverse("job-detail", args=[job.pk])).text
    with pytest.raises(CommandError, match="ran over pool, not a sample"):
        call_command(
            "export_qrels", "--collection", "demo", "--kind", "prels", "--job",
            str(job.pk), "-o", str(tmp_path / "job.prels"),
        )  # fmt: skip
    # The sample's own prels stay one option away.
    call_command(
        "export_qrels", "--collection", "demo", "--kind", "prels", "--sample",
        sample.name, "-o", str(tmp_path / "sample.prels"), stderr=io.StringIO(),
    )  # fmt: skip
    assert (tmp_path / "sample.prels").exists()


def test_a_sample_job_offers_its_samples_prels(monkeypatch, staff_client, tmp_path):
    monkeypatch.setattr(launch, "enqueue_chunks", lambda ids: None)
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    collection = Collection.objects.get(name="demo")
    sample = Sample.objects.get(name="demo-statap15")
    staff_client.post(
        reverse("job-launch"),
        {
            "collection": collection.pk, "source": "sample", "pool": sample.pool.pk,
            "sample": sample.pk, "topics": "1", "k": 3, "lam": 0.5, "stem": "porter",
            "stopwords": "default", "grades": "", "aspects": "", "name": "",
        },
    )  # fmt: skip
    job = MatchJob.objects.get()
    assert (job.source, job.sample_id) == ("sample", sample.pk)
    prels = reverse("job-export", args=[job.pk, "prels"])
    assert prels in staff_client.get(reverse("job-detail", args=[job.pk])).text
    assert staff_client.get(prels).status_code == 200
    out = tmp_path / "job.prels"
    call_command(
        "export_qrels", "--collection", "demo", "--kind", "prels", "--job",
        str(job.pk), "-o", str(out), stderr=io.StringIO(),
    )  # fmt: skip
    side = json.loads(out.with_name(out.name + ".provenance.json").read_text())
    assert side["sample"] == sample.name
