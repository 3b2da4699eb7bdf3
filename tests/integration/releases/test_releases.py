"""A test-collection release of the demo, judged by the simulated assessor, read into
an emptied database (a second installation with the demo's documents loaded): the
default estimates of the demo runs come out the same to the last digit as
``evaluate`` prints them in the first; a changed file is refused by its checksum."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.imports import collection_import
from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.models import MatchJob, Nugget, Qrels, Run
from tests.integration.releases.world import database_empty

pytestmark = pytest.mark.django_db
ESTIMATES = ("maAP", "maAP_ci_low", "maAP_ci_high", "ma_topics", "statMAP", "bias_diff")


def _evaluate(job: int, sample: str, runs: list[str]) -> dict[tuple[str, str], str]:
    out = io.StringIO()
    call_command(
        "evaluate", "--job", str(job), "--sample", sample, "--collection", "demo",
        "--run", *runs, stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    found, current = {}, runs[0]
    for line in out.getvalue().splitlines():
        fields = line.split("\t")
        if fields[0] == "run":
            current = fields[1]
        elif fields[1] == "all" and fields[0] in ESTIMATES:
            found[(current, fields[0])] = fields[2]
    return found


def test_a_release_reproduces_the_estimates_in_a_new_installation(
    simulated_demo, tmp_path
):
    job, sample = simulated_demo.job, simulated_demo.sample
    runs = sorted(Run.objects.values_list("name", flat=True))
    printed = _evaluate(job.pk, sample.name, runs)
    archive = tmp_path / "demo-release.tar.gz"
    out = io.StringIO()
    call_command(
        "export_release", "--collection", "demo", "--job", str(job.pk), "-o",
        str(archive), stdout=out,
    )  # fmt: skip
    assert f"estimates of {len(runs)} runs" in out.getvalue()
    with tarfile.open(archive) as tar:
        names = {m.name for m in tar.getmembers()}
        manifest = json.load(tar.extractfile("demo-release/manifest.json"))
        readme = tar.extractfile("demo-release/README.md").read().decode()
        judgments = tar.extractfile("demo-release/judgments.tsv").read().decode()
    for name in ("README.md", "qrels.human.txt", "qrels.merged.txt",
                 "qrels.probabilistic.txt", "prels.txt", "nuggets.jsonl",
                 "judgments.tsv", "agreement.csv", "estimates.tsv",
                 "topics.jsonl"):  # fmt: skip
        assert f"demo-release/{name}" in names
        assert name == "README.md" or len(manifest["files"][name]["sha256"]) == 64
    assert manifest["sample"]["name"] == sample.name
    assert manifest["job"]["id"] == job.pk
    assert manifest["human_qrels_rule"]["name"] == "highest"
    assert "simulated-assessor" not in judgments
    assert {x.split("\t")[2] for x in judgments.splitlines()[1:]} == {"assessor-1"}
    assert f"| {runs[0]} |" in readme or any(f"| {r} |" in readme for r in runs)
    assert "95% interval" in readme

    database_empty()
    collection_import(path=DATA_DIR / "docs.jsonl", name="demo")
    out, err = io.StringIO(), io.StringIO()
    call_command("import_release", str(archive), stdout=out, stderr=err)
    assert "are reproduced" in err.getvalue()
    again = {}
    for line in out.getvalue().splitlines()[1:]:
        run, measure, topic, value = line.split("\t")
        if topic == "all" and measure in ESTIMATES:
            again[(run, measure)] = value
    assert again == printed
    assert len(printed) == len(runs) * len(ESTIMATES)
    assert Qrels.objects.filter(name="release-prels").exists()
    assert (
        Nugget.objects.filter(bank__name="release").count()
        == manifest["files"]["nuggets.jsonl"]["lines"]
    )


def test_a_changed_release_file_is_refused(simulated_demo, tmp_path):
    folder = tmp_path / "release"
    call_command(
        "export_release", "--collection", "demo", "--job",
        str(simulated_demo.job.pk), "-o", str(folder), stdout=io.StringIO(),
    )  # fmt: skip
    qrels = folder / "qrels.human.txt"
    qrels.write_text(qrels.read_text().replace(" 0\n", " 1\n", 1))
    with pytest.raises(CommandError, match=r"qrels\.human\.txt: checksum differs"):
        call_command("import_release", str(folder), "--collection", "demo")
    with pytest.raises(CommandError, match="is not empty"):
        call_command(
            "export_release", "--collection", "demo", "--job",
            str(simulated_demo.job.pk), "-o", str(folder), stdout=io.StringIO(),
        )  # fmt: skip


def test_staff_download_a_release_from_the_collection(
    simulated_demo, client, staff, assessor
):
    client.force_login(staff)
    url = "/collections/demo/release/"
    assert 'href="/collections/demo/release/"' in client.get("/collections/demo/").text
    page = client.get(url)
    assert 'id="release-form"' in page.text
    job = simulated_demo.job
    got = client.get(url, {"job": job.pk})
    assert got.status_code == 200
    assert got["Content-Disposition"] == (
        f'attachment; filename="demo-release-job{job.pk}.tar.gz"'
    )
    with tarfile.open(fileobj=io.BytesIO(got.content)) as tar:
        top = f"demo-release-job{job.pk}"
        manifest = json.load(tar.extractfile(f"{top}/manifest.json"))
    assert manifest["job"]["id"] == job.pk
    client.force_login(assessor)
    assert client.get(url).status_code == 403


def test_a_release_of_a_sample_in_rounds_reproduces_its_estimates(tmp_path):
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    out = tmp_path / "simulation"
    call_command(
        "simulate", "--collection", "demo", "--qrels", str(DATA_DIR / "qrels.txt"),
        "--depth", "20", "--sample-size", "10", "--rounds", "2", "--seed", "5",
        "--out", str(out), stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    # The last round's job: fitted with the whole sample's design.
    job = MatchJob.objects.filter(inference__fitted_at__isnull=False).latest("pk").pk
    folder = tmp_path / "release"
    call_command(
        "export_release", "--collection", "demo", "--job", str(job), "-o",
        str(folder), stdout=io.StringIO(),
    )  # fmt: skip
    # The rounds' variance factors travel in the prels sidecar.
    sidecar = json.loads((folder / "prels.txt.provenance.json").read_text())
    assert sidecar["rounds"] == 2
    database_empty()
    collection_import(path=DATA_DIR / "docs.jsonl", name="demo")
    err = io.StringIO()
    call_command("import_release", str(folder), stdout=io.StringIO(), stderr=err)
    assert "are reproduced" in err.getvalue()
