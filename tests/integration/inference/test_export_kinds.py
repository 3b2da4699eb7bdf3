"""One export dispatcher for the command and the job page: every kind carries its
provenance; merged and probabilistic qrels never contradict a person (the demo's
``demo-060``, judged non-relevant by both assessors of topic 1, is 0 there and never
listed as inferred relevant, whatever the rule), while inferred qrels are the rule's
own call on every document, the people's grade beside it in the sidecar: the two
downloads differ as their names say."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils.html import escape

from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.export_kinds import (
    EXPORT_KINDS,
    ExportRequest,
    export_filename,
    export_make,
)
from nuggets_app.inference.services.exports import QRELS_CONTENTS
from nuggets_app.inference.services.job_model import job_probabilities
from nuggets_app.inference.services.readiness import rule_default
from nuggets_app.models import Document, MatchResult, Topic
from tests.integration.worlds.demo import JUDGED_NON_RELEVANT, demo_world

pytestmark = pytest.mark.django_db

# Rules that would call every matched document relevant, and the usual ones.
RULES = [
    DecisionRule(kind="probability", threshold=0.0),
    DecisionRule(kind="threshold", threshold=0.0),
    DecisionRule(kind="top_n", n=50),
    DecisionRule(kind="expected_f1"),
    DecisionRule(kind="probability", threshold=0.5),
]


@pytest.fixture
def fitted(monkeypatch):
    return demo_world(monkeypatch)


def _line(export, qid: str, docno: str) -> list[str]:
    (line,) = [x.split() for x in export.lines if x.split()[0] == qid and docno in x]
    return line


def test_no_export_marks_the_judged_non_relevant_document_relevant(fitted):
    job = fitted.job
    topic = Topic.objects.get(collection=fitted.collection, qid="1")
    document = Document.objects.get(docno=JUDGED_NON_RELEVANT)
    docs, _ = job_probabilities(job=job, override=False)[topic.pk]
    assert document.pk in docs.tolist()  # pooled and scored by the model
    for rule in RULES:
        merged = export_make(
            ExportRequest(
                kind="merged", collection=fitted.collection, job=job, rule=rule
            )
        )
        assert _line(merged, "1", JUDGED_NON_RELEVANT) == [
            "1", "0", JUDGED_NON_RELEVANT, "0",
        ]  # fmt: skip
        record = _record(merged, "1", JUDGED_NON_RELEVANT)
        assert record["source"] == "person"
        assert record["assessors"] == ["alice", "bob"]
        # The inferred line is the rule's; the people's label stands beside it.
        inferred = export_make(
            ExportRequest(
                kind="inferred", collection=fitted.collection, job=job, rule=rule
            )
        )
        record = _record(inferred, "1", JUDGED_NON_RELEVANT)
        assert record["source"] in ("model", "matcher")
        assert record["person"] == {
            "rel": 0, "assessors": ["alice", "bob"], "how": "highest",
        }  # fmt: skip
        line = _line(inferred, "1", JUDGED_NON_RELEVANT)
        assert int(line[3]) == record["rel"]
    probabilistic = export_make(
        ExportRequest(kind="probabilistic", collection=fitted.collection, job=job)
    )
    line = _line(probabilistic, "1", JUDGED_NON_RELEVANT)
    assert (line[2], float(line[3]), line[5]) == ("0", 0.0, "human")


def _record(export, qid: str, docno: str) -> dict:
    (record,) = [
        r for r in export.provenance["lines"] if (r["qid"], r["docno"]) == (qid, docno)
    ]
    return record


def test_inferred_and_merged_qrels_differ_as_their_names_say(fitted, staff_client):
    """Inferred: the rule on every document of the job; merged: the people's
    grade wherever someone judged, the inferred line elsewhere."""
    job, collection = fitted.job, fitted.collection
    rule = DecisionRule(kind="probability", threshold=0.0)  # calls all relevant
    inferred = export_make(
        ExportRequest(kind="inferred", collection=collection, job=job, rule=rule)
    )
    merged = export_make(
        ExportRequest(kind="merged", collection=collection, job=job, rule=rule)
    )
    human = export_make(ExportRequest(kind="human", collection=collection))
    assert inferred.text() != merged.text()
    scored = MatchResult.objects.filter(job=job).count()
    assert len(inferred.lines) == scored
    (level,) = {x.split()[3] for x in inferred.lines}  # every one relevant
    assert int(level) > 0
    by_doc = {tuple(x.split()[::2][:2]): x for x in inferred.lines}
    people = {tuple(x.split()[::2][:2]): x for x in human.lines}
    for line in merged.lines:
        key = tuple(line.split()[::2][:2])
        assert line == people.get(key, by_doc.get(key))
    assert set(people) <= {tuple(x.split()[::2][:2]) for x in merged.lines}
    counts = inferred.provenance["counts"]
    assert counts["judged"] == sum(1 for k in people if k in by_doc)
    assert counts["disagree"] == sum(
        1 for k in people if k in by_doc and people[k].split()[3] == "0"
    )
    assert counts["disagree"] > 0
    for export in (inferred, merged, human):
        assert (
            export.provenance["contents"] == QRELS_CONTENTS[export.provenance["kind"]]
        )
    page = staff_client.get(reverse("job-detail", args=[job.pk])).text
    for kind in ("human", "inferred", "merged"):
        item = page.split(f'id="download-{kind}">', 1)[1].split("</li>", 1)[0]
        assert escape(QRELS_CONTENTS[kind]) in item
    downloads = {
        kind: staff_client.get(
            reverse("job-export", args=[job.pk, kind]),
            {"kind": "probability", "threshold": "0"},
        ).content.decode()
        for kind in ("inferred", "merged")
    }
    assert downloads == {"inferred": inferred.text(), "merged": merged.text()}


def test_the_topic_page_lists_it_as_judged_non_relevant(fitted, staff_client):
    url = reverse("job-topic", args=[fitted.job.pk, "1"])
    page = staff_client.get(url, {"kind": "probability", "threshold": "0"}).text
    judged = page.split('id="judged-documents"', 1)[1].split("</section>", 1)[0]
    inferred = page.split('id="inferred-documents"', 1)[1].split("</section>", 1)[0]
    row = re.search(rf">{JUDGED_NON_RELEVANT}</a></th>(.*?)</tr>", judged)
    assert row is not None
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.group(1))
    assert cells[:3] == ["0", "non-relevant", "0"]
    assert JUDGED_NON_RELEVANT not in inferred


def test_every_kind_names_its_kind_rule_level_job_sample_and_counts(fitted):
    job = fitted.job
    for kind in EXPORT_KINDS:
        export = export_make(
            ExportRequest(
                kind=kind,
                collection=fitted.collection,
                job=job,
                sample=fitted.sample if kind == "prels" else None,
            )
        )
        side = export.provenance
        assert side["kind"] == kind
        assert side["collection"] == "demo"
        assert side["relevance_level"] == 1
        assert side["counts"]["lines"] == len(export.lines)
        if kind != "human":  # every judgment, whichever sample it came from
            assert side["sample"] == fitted.sample.name
            job_id = side["job"]["id"] if isinstance(side["job"], dict) else side["job"]
            assert job_id == job.pk
        if kind in ("inferred", "merged"):
            assert side["rule"] == rule_default(job).as_dict()
        assert json.loads(export.sidecar()) == side


def test_the_command_and_the_job_page_give_the_same_bytes(
    fitted, staff_client, tmp_path
):
    job = fitted.job
    fields = {"kind": "probability", "threshold": "0.3"}
    for kind in ("human", "inferred", "merged", "probabilistic", "scores", "passages"):
        out = tmp_path / kind
        call_command(
            "export_qrels", "--collection", "demo", "--kind", kind, "--job",
            str(job.pk), "--rule", "p:0.3", "-o", str(out), stderr=io.StringIO(),
        )  # fmt: skip
        page = staff_client.get(reverse("job-export", args=[job.pk, kind]), fields)
        assert page.status_code == 200, kind
        assert page["Content-Disposition"] == (
            f'attachment; filename="{export_filename(kind=kind, job=job)}"'
        )
        assert page.content.decode() == out.read_text(), kind
        side = staff_client.get(
            reverse("job-export-provenance", args=[job.pk, kind]), fields
        )
        written = out.with_name(out.name + ".provenance.json").read_text()
        assert side.content.decode() == written, kind
        assert side.json()["kind"] == kind
