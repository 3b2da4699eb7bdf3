"""Model-assisted estimates of runs from a job's cross-fitted model and a sample:
``evaluate --job`` output, the bias flag, cross-fitting blind to a topic's own
judgments, and the runs page's model-assisted table."""

from __future__ import annotations

import io
import math
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from nuggets_app.evaluation.selectors import sample_prels
from nuggets_app.evaluation.services.estimates import (
    FLAG_NOTE,
    FLAG_REASONS,
    INTERVAL_NOTE,
    MODEL_ONLY_NOTE,
    job_crossfit,
    job_pool_runs,
    job_sample_estimates,
)
from nuggets_app.inference.services.exports import prels_export, probabilistic_export
from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.intervals import MODEL_ONLY_VAR
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.models import Judgment, PoolDocument, Run, RunEntry
from nuggets_app.pooling.selectors import sample_design

pytestmark = pytest.mark.django_db

UNJUDGED_RUN = "unjudged-only"


def _unjudged(world) -> dict[str, list[str]]:
    """Per topic, the pooled documents nobody judged (docno order)."""
    judged = set(Judgment.objects.values_list("topic__qid", "document__docno"))
    out: dict[str, list[str]] = {}
    rows = PoolDocument.objects.filter(pool=world.pool).values_list(
        "topic__qid", "document__docno"
    )
    for qid, docno in rows:
        if (qid, docno) not in judged:
            out.setdefault(qid, []).append(docno)
    return {q: sorted(d) for q, d in out.items()}


def _write_run(path, name: str, scores: dict[str, dict[str, float]]) -> str:
    lines = []
    for qid in sorted(scores, key=int):
        ranked = sorted(scores[qid].items(), key=lambda kv: (-kv[1], kv[0]))
        lines += [
            f"{qid} Q0 {d} {i} {s!r} {name}\n" for i, (d, s) in enumerate(ranked, 1)
        ]
    path.write_text("".join(lines))
    return str(path)


def _blocks(text: str) -> dict[str, dict[tuple[str, str], str]]:
    blocks: dict[str, dict[tuple[str, str], str]] = {}
    current = ""
    for line in text.splitlines():
        measure, topic, *value = line.split("\t")
        if measure == "run":
            current = topic
            continue
        blocks.setdefault(current, {})[(measure, topic)] = value[0]
    return blocks


def test_evaluate_with_a_job_adds_model_assisted_estimates_and_the_bias_check(
    fitted, tmp_path
):
    world = fitted
    runs = {n: world.file_runs[n] for n in sorted(world.file_runs)[:2]}
    unjudged = _unjudged(world)
    runs[UNJUDGED_RUN] = {
        q: {d: float(100 - i) for i, d in enumerate(docs)}
        for q, docs in unjudged.items()
    }
    paths = [_write_run(tmp_path / f"{n}.run", n, s) for n, s in runs.items()]
    probs = tmp_path / "job.prob"
    probabilistic_export(job=world.job).write(probs)
    by_file, by_job, err = io.StringIO(), io.StringIO(), io.StringIO()
    call_command("evaluate", "--expected", str(probs), *paths, stdout=by_file)
    call_command(
        "evaluate", "--job", str(world.job.pk), *paths, stdout=by_job, stderr=err
    )
    expected_lines = by_file.getvalue().splitlines()
    job_lines = by_job.getvalue().splitlines()
    # Every line the expected measures print is still there, in the same order.
    assert [line for line in job_lines if line in set(expected_lines)] == (
        expected_lines
    )
    blocks = _blocks(by_job.getvalue())
    prels = sample_prels(world.sample)
    for name, scores in runs.items():
        values = blocks[name]
        estimate = float(values[("maAP", "all")])
        low = float(values[("maAP_ci_low", "all")])
        high = float(values[("maAP_ci_high", "all")])
        assert low <= estimate <= high
        topics = [q for (m, q) in values if m == "maAP" and q != "all"]
        assert int(values[("ma_topics", "all")]) == len(topics) > 0
        per_topic = [float(values[("maAP", q)]) for q in topics]
        assert all(0.0 <= v <= 1.0 for v in per_topic)
        assert estimate == pytest.approx(sum(per_topic) / len(per_topic))
        for measure in ("maP@30", "maRprec"):
            assert float(values[(f"{measure}_ci_low", "all")]) <= float(
                values[(measure, "all")]
            )
        # statMAP of the check: statAP's own values on the topics valid for both.
        valid = {
            t.qid: t.statap for t in statap_evaluate(prels, scores).topics if t.valid
        }
        common = [q for q in topics if q in valid]
        if common:
            assert float(values[("statMAP", "all")]) == pytest.approx(
                sum(valid[q] for q in common) / len(common)
            )
        diff = float(values[("bias_diff", "all")])
        shift = float(values[("bias_shift", "all")])
        assert diff == pytest.approx(
            float(values[("EAP_check", "all")])
            - shift * float(values[("statMAP", "all")])
        )
        flag = values[("bias_flag", "all")]
        low_d = float(values[("bias_diff_ci_low", "all")])
        high_d = float(values[("bias_diff_ci_high", "all")])
        assert flag == ("1" if low_d > 0 or high_d < 0 else "0")
        if name != UNJUDGED_RUN:
            assert not math.isnan(float(values[("statMAP", "all")]))
    # statAP sees nothing of a run of unjudged documents (0, with no variance) while
    # the model credits them: the flag is raised.
    unjudged_values = blocks[UNJUDGED_RUN]
    assert float(unjudged_values[("statMAP", "all")]) == 0.0
    assert float(unjudged_values[("EAP_check", "all")]) > 0.0
    assert unjudged_values[("bias_flag", "all")] == "1"
    assert INTERVAL_NOTE in err.getvalue()
    assert FLAG_NOTE in err.getvalue()
    # Each flagged run gets one line in plain words.
    assert (
        f"# {UNJUDGED_RUN} flagged: {FLAG_REASONS['over']}"
        in err.getvalue().splitlines()
    )


def test_summary_prints_only_the_all_lines_and_a_bad_sample_is_named(fitted, tmp_path):
    world = fitted
    name = sorted(world.file_runs)[0]
    path = _write_run(tmp_path / "r.run", name, world.file_runs[name])
    out = io.StringIO()
    call_command(
        "evaluate", "--job", str(world.job.pk), "--summary", "--sample",
        world.sample.name, path, stdout=out, stderr=io.StringIO(),
    )  # fmt: skip
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert {topic for _, topic, _ in rows} == {"all"}
    assert "maAP" in {m for m, _, _ in rows}
    with pytest.raises(CommandError, match="no sample 'nope' in the pool of job"):
        call_command(
            "evaluate", "--job", str(world.job.pk), "--sample", "nope", path,
            stdout=io.StringIO(),
        )  # fmt: skip


def test_a_topics_cross_fitted_p_ignores_its_own_judgments(fitted):
    world = fitted
    before = job_crossfit(job=world.job)
    weighted = job_crossfit(job=world.job, sample=world.sample)
    assert set(before) == set(weighted) == set(world.topics)
    # A job on the pool is fitted with the design of the pool's sample (1/π weights
    # and the sample's anchor): the same p whether the sample is named or not.
    assert world.job.inference.fit_sample == world.sample
    assert weighted == before
    flipped = Judgment.objects.filter(topic=world.topics["1"]).order_by("pk").first()
    flipped.relevance = 1 - flipped.relevance
    flipped.save()
    after = job_crossfit(job=world.job)
    assert after["1"] == before["1"]
    assert any(after[q] != before[q] for q in world.topics if q != "1")
    weighted_after = job_crossfit(job=world.job, sample=world.sample)
    assert weighted_after["1"] == weighted["1"]
    assert any(weighted_after[q] != weighted[q] for q in world.topics if q != "1")


def test_the_runs_page_shows_the_model_assisted_estimate_and_a_flagged_run(
    researcher, client, fitted
):
    world = fitted
    run = Run.objects.create(collection=world.collection, name=UNJUDGED_RUN)
    docs = {d.docno: d for d in world.collection.documents.all()}
    RunEntry.objects.bulk_create(
        RunEntry(run=run, topic=world.topics[q], document=docs[d], rank=i,
                 score=float(100 - i))
        for q, docnos in _unjudged(world).items()
        for i, d in enumerate(docnos, 1)
    )  # fmt: skip
    client.force_login(researcher)
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    page = client.get(
        url, {"sample": world.sample.pk, "expected": world.job.pk, "qrels": "human"}
    )
    assert page.status_code == 200
    table = page.context["tables"]["model_assisted"]
    assert table["columns"][:6] == (
        "run",
        "pool",
        "maAP",
        "ci_low",
        "ci_high",
        "topics",
    )
    rows = {row[0]: row for row in table["rows"]}
    assert set(rows) == {*world.file_runs, UNJUDGED_RUN}
    # A stored run that did not build the pool is estimated as a new run.
    assert rows[UNJUDGED_RUN][1] == "new"
    assert {rows[n][1] for n in world.file_runs} == {"pooled"}
    assert rows[UNJUDGED_RUN][-2] == "flagged"
    assert rows[UNJUDGED_RUN][-1] == FLAG_REASONS["over"]
    assert page.context["model_assisted_flagged"][UNJUDGED_RUN] == FLAG_REASONS["over"]
    assert "⚑ flagged" in page.text
    assert "by more than sampling explains" in page.text
    assert "about 95% of such intervals contain" in page.text
    # The page names the job whose estimates and new runs it shows.
    assert page.context["model_assisted_job"].startswith(f"job {world.job.pk}")
    assert 'id="model-assisted-job"' in page.text
    only_sample = client.get(
        url, {"sample": world.sample.pk, "expected": "", "qrels": "human"}
    )
    assert "model-assisted-hint" in only_sample.text
    assert "model_assisted" not in only_sample.context["tables"]


def test_compare_qrels_flags_the_run_the_model_credits_and_statap_cannot_see(
    fitted, tmp_path
):
    world = fitted
    runs = {n: world.file_runs[n] for n in sorted(world.file_runs)}
    runs[UNJUDGED_RUN] = {
        q: {d: float(100 - i) for i, d in enumerate(docs)}
        for q, docs in _unjudged(world).items()
    }
    paths = [_write_run(tmp_path / f"{n}.run", n, s) for n, s in runs.items()]
    prels = tmp_path / "sample.prels"
    prels_export(sample=world.sample).write(prels)
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "compare_qrels", "--prels", str(prels), "--job", str(world.job.pk), *paths,
        stdout=out, stderr=err,
    )  # fmt: skip
    lines = out.getvalue().splitlines()
    assert lines[5] == "run\tscore_a\tscore_b\trank_a\trank_b\tdelta\tbias_flag"
    flags = {row[0]: row[6] for row in (line.split("\t") for line in lines[6:])}
    assert set(flags) == set(runs)
    assert flags[UNJUDGED_RUN] == "1"
    assert set(flags.values()) <= {"0", "1"}
    assert FLAG_NOTE in err.getvalue()
    reasons = [line for line in err.getvalue().splitlines() if " flagged: " in line]
    assert f"# {UNJUDGED_RUN} flagged: {FLAG_REASONS['over']}" in reasons
    assert len(reasons) == sum(flag == "1" for flag in flags.values())


def test_topics_whose_sample_holds_no_relevant_document_are_named(
    researcher, client, fitted, tmp_path
):
    """Their estimates rest on the model alone: the command and the runs page name
    them, with what that means; with a relevant judgment in every topic, neither does."""
    world = fitted
    name = sorted(world.file_runs)[0]
    path = _write_run(tmp_path / "r.run", name, world.file_runs[name])
    level = world.collection.relevance_level
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    query = {"sample": world.sample.pk, "expected": world.job.pk, "qrels": "human"}
    client.force_login(researcher)

    def shown():
        err = io.StringIO()
        call_command(
            "evaluate", "--job", str(world.job.pk), path,
            stdout=io.StringIO(), stderr=err,
        )  # fmt: skip
        return err.getvalue(), client.get(url, query)

    err, page = shown()
    assert MODEL_ONLY_NOTE not in err
    assert 'id="model-only"' not in page.text
    qid = sorted(world.topics, key=int)[0]
    judged = Judgment.objects.filter(topic=world.topics[qid], relevance__gte=level)
    assert judged.exists()
    # As a re-judgment through the service would (the cached page sees the change).
    judged.update(relevance=0, updated_at=timezone.now())
    err, page = shown()
    [named] = page.context["model_only_topics"]
    # How many judged documents would narrow it: a count, or the whole pool.
    assert re.fullmatch(rf"{qid} \(about (\d+|all) judged\)", named)
    assert f"# topics without a relevant judged document: {named}\n" in err
    assert MODEL_ONLY_NOTE in err
    assert f"Topics without a relevant judged document: {named}." in page.text
    # Where it is averaged (R̂ > 0), its interval is the widest a [0, 1] value can
    # need, and the run counts it.
    found = job_sample_estimates(
        job=world.job, sample=world.sample, runs={name: world.file_runs[name]}
    )
    topics = found[name].ap.topics
    assert [t.qid for t in topics if t.model_only] == [
        t.qid for t in topics if t.qid == qid
    ]
    assert all(t.var == MODEL_ONLY_VAR for t in topics if t.model_only)
    assert found[name].ap.n_model_only == sum(t.qid == qid for t in topics)


def test_the_reported_figures_are_the_estimators_own_with_its_defaults(fitted):
    """One front door: what the runs page, ``evaluate --job`` and the exports report
    for the job's pooled runs is ``model_assisted_evaluate`` and ``bias_check`` called
    with their defaults (the reported estimator) on the sample's prels, the job's
    cross-fitted p and the sample's design, to the last digit (repr also holds NaN
    equal)."""
    world = fitted
    prels = sample_prels(world.sample)
    probs = job_crossfit(job=world.job, sample=world.sample)
    design = sample_design(sample=world.sample)
    level = world.job.relevance_level
    runs = job_pool_runs(world.job)
    page = job_sample_estimates(job=world.job, sample=world.sample, runs=runs)
    direct = model_assisted_evaluate(prels, probs, runs, level=level, design=design)
    checks = {
        c.run: c for c in bias_check(prels, probs, runs, level=level, design=design)
    }
    assert set(page) == set(direct) == set(runs)
    for name, found in page.items():
        for measure, estimate in found.measures.items():
            assert repr(estimate) == repr(direct[name][measure])
        assert repr(found.check) == repr(checks[name])
    assert Estimator() == REPORTED
