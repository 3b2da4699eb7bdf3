"""Documents scored for a finished job after it ran (a new run's unpooled documents,
documents imported later) in the job's exports and in ``evaluate --job``'s EAP: the
model's p beside the pool, the rule's decisions, the pooled lines unchanged."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command

from nuggets_app.evaluation.services import new_runs as service
from nuggets_app.inference.services import unpooled
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import probabilistic_export, qrels_export
from nuggets_app.inference.services.job_model import job_features, job_probabilities
from nuggets_app.ir.expected import run_expected
from nuggets_app.models import UnpooledScore
from tests.integration.evaluation.test_new_runs import NEW, new_run

pytestmark = pytest.mark.django_db


def _evaluated(world):
    """Evaluate the new run: its unpooled documents get their UnpooledScore rows."""
    run = new_run(world)
    found = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NEW: run}
    )
    assert UnpooledScore.objects.filter(job=world.job).exists()
    return run, found


def _later_pairs(job) -> dict[tuple[str, str], tuple[float, int | None]]:
    rows = UnpooledScore.objects.filter(job=job).values_list(
        "topic__qid", "document__docno", "score", "nugget_id"
    )
    return {(q, d): (score, nugget) for q, d, score, nugget in rows}


def test_a_pooled_document_scored_again_gets_its_pooled_p(fitted):
    """The same raw features, z-scored with the same pool: the same p."""
    job = fitted.job
    topic_id, (ids, _) = next(iter(sorted(job_features(job).items())))
    chosen = [int(d) for d in ids[:6]]
    unpooled.unpooled_score(job=job, topic_id=topic_id, document_ids=chosen)
    docs, p = unpooled.later_columns(job=job, on_model=True)[topic_id]
    pool_docs, pool_p = job_probabilities(job=job, override=False)[topic_id]
    pooled = dict(zip(pool_docs.tolist(), pool_p.tolist(), strict=True))
    assert docs.tolist() == sorted(chosen)
    np.testing.assert_allclose(p, [pooled[d] for d in docs.tolist()], atol=1e-9)


def test_the_probabilistic_export_adds_the_later_documents_with_their_p(fitted):
    job = fitted.job
    _evaluated(fitted)
    plain = probabilistic_export(job=job)
    both = probabilistic_export(job=job, later=True)
    later = _later_pairs(job)
    added = sorted(set(both.lines) - set(plain.lines))
    assert set(plain.lines) <= set(both.lines)
    assert len(both.lines) == len(plain.lines) + len(later)
    assert both.provenance["counts"]["later"] == len(later)
    assert plain.provenance["counts"]["later"] == 0
    found = set()
    for line in added:
        qid, docno, rel, p, pi, source = line.split()
        assert (rel, pi, source) == ("-1", "-1", "later")
        assert 0.0 < float(p) < 1.0
        found.add((qid, docno))
    assert found == set(later)


@pytest.mark.parametrize("kind", ["threshold", "top_n"])
def test_inferred_qrels_decide_the_later_documents_by_the_rule(fitted, kind):
    """A threshold applies as it is; a rule that picks per topic applies the smallest
    value (p with the job's model, as top N ranks here, else the score) it kept in
    the topic's pool. Pooled lines do not change."""
    job, collection = fitted.job, fitted.job.collection
    _evaluated(fitted)
    later = _later_pairs(job)
    top = max(score for score, _ in later.values())
    assert top > 0
    rule = DecisionRule(kind=kind, threshold=top, n=5)
    plain = qrels_export(collection=collection, kind="inferred", job=job, rule=rule)
    both = qrels_export(
        collection=collection, kind="inferred", job=job, rule=rule, later=True
    )
    assert set(plain.lines) <= set(both.lines)
    assert both.provenance["counts"]["later"] == len(later)
    grade = collection.relevance_level
    kept = {}
    for line in plain.provenance["lines"]:
        # Every inferred line is the rule's own decision, judged documents too.
        assert line["source"] != "person"
        if line["rel"] >= grade:
            value = line.get("p", line["score"])
            kept[line["qid"]] = min(kept.get(line["qid"], 1e9), value)
    marked = {(r["qid"], r["docno"]): r for r in both.provenance["lines"]}
    for (qid, docno), (score, nugget) in later.items():
        record = marked[(qid, docno)]
        assert record["later"] is True
        assert (record["score"], record["nugget"]) == (score, nugget)
        cut = rule.threshold if rule.kind == "threshold" else kept.get(qid, 1e9)
        assert record["rel"] == (grade if record.get("p", score) >= cut else 0)
    assert {marked[pair]["rel"] for pair in later} == {0, grade}  # both decisions
    if rule.kind == "top_n":
        assert all("p" in marked[pair] for pair in later)  # ranked by the model


def test_evaluate_counts_a_new_runs_unpooled_documents_in_eap(fitted, tmp_path):
    world = fitted
    run = new_run(world)
    path = tmp_path / "new.run"
    path.write_text(
        "".join(
            f"{qid} Q0 {d} {i} {s} {NEW}\n"
            for qid, docs in run.items()
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), 1)
        )
    )
    out = io.StringIO()
    call_command(
        "evaluate",
        "--job",
        str(world.job.pk),
        str(path),
        stdout=out,
        stderr=io.StringIO(),
    )
    values = {
        tuple(line.split("\t")[:2]): float(line.split("\t")[2])
        for line in out.getvalue().splitlines()
    }
    found = service.new_runs_evaluate(
        job=world.job, sample=world.sample, new_runs={NEW: run}, pooled_runs={}
    )
    from nuggets_app.evaluation.selectors import job_probability_qrels

    pooled = job_probability_qrels(world.job)
    merged = {q: {**found.unpooled_p.get(q, {}), **d} for q, d in pooled.items()}
    with_unpooled = run_expected(merged, run, measures=["EAP"]).mean["EAP"]
    without = run_expected(pooled, run, measures=["EAP"]).mean["EAP"]
    assert values[("EAP", "all")] == pytest.approx(with_unpooled, abs=1e-4)
    assert with_unpooled > without


def test_the_job_page_exports_the_later_documents_when_asked(
    fitted, client, researcher
):
    from django.urls import reverse

    job = fitted.job
    _evaluated(fitted)
    client.force_login(researcher)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert 'name="later"' in page
    url = reverse("job-export", args=[job.pk, "probabilistic"])
    plain = client.get(url).content.decode().splitlines()
    both = client.get(url, {"later": "on"}).content.decode().splitlines()
    assert len(both) == len(plain) + len(_later_pairs(job))
    assert sum(1 for line in both if line.endswith("-1 later")) == len(
        _later_pairs(job)
    )
    assert not [line for line in plain if line.endswith(" later")]
