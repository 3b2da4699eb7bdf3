"""export_ltr on a real Cranfield job: labels are the merged qrels, the files load in
LightGBM and scikit-learn with the right qids and labels, folds partition the topics."""

from __future__ import annotations

import io
import json

import lightgbm
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from sklearn.datasets import load_svmlight_file

from lab.maths.ltr import FEATURE_NAMES
from lab.services.ltr import ltr_export
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import qrels_export
from nuggets_app.inference.services.job_model import job_model_fit, job_probabilities
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db
QIDS = ("3", "4", "8")


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, qids=QIDS, per_topic=20, judge=8)


@pytest.fixture
def job(world, settings):
    job = pool_job(world, settings, chunk_size=20)
    job_model_fit(job=job)
    return job


RULE = DecisionRule(kind="probability", threshold=0.5)


def test_files_load_in_lightgbm_and_scikit_learn_with_merged_labels(
    world, job, tmp_path
):
    export = ltr_export(job=job, rule=RULE, folds=3, seed=2)
    export.write(tmp_path)
    merged = qrels_export(
        collection=world.collection, kind="merged", job=job, rule=RULE
    ).provenance["lines"]
    x, y, qid = load_svmlight_file(
        str(tmp_path / "all.txt"), n_features=len(FEATURE_NAMES), query_id=True
    )
    assert y.astype(int).tolist() == [rec["rel"] for rec in merged]
    assert qid.tolist() == [int(rec["qid"]) for rec in merged]
    comments = [
        line.split(" # ")[1].split()
        for line in (tmp_path / "all.txt").read_text().splitlines()
    ]
    assert [c[0] for c in comments] == [rec["docno"] for rec in merged]
    assert [c[1] == "person" for c in comments] == [
        rec["source"] == "person" for rec in merged
    ]
    # 8 judged per topic, the other 12 pooled documents inferred by p >= 0.5.
    assert export.provenance["counts"] == {
        "person": 24, "inferred": 36, "lines": 60, "topics": 3,
        "relevant": sum(rec["rel"] >= 1 for rec in merged),
    }  # fmt: skip
    # The model column is the job's own p, not overridden by the judgments.
    raw = job_probabilities(job=job, override=False)
    model_col = FEATURE_NAMES.index("model_p")
    topic = world.topics[0]
    docs, p = raw[topic.pk]
    by_doc = dict(zip(docs.tolist(), p.tolist(), strict=True))
    docnos = {d.pk: d.docno for d in world.pooled[topic.qid]}
    want = {docnos[d]: v for d, v in by_doc.items()}
    rows = [i for i, rec in enumerate(merged) if rec["qid"] == topic.qid]
    for i in rows:
        assert x[i, model_col] == pytest.approx(want[merged[i]["docno"]], abs=1e-5)
    # LightGBM's own text parser knows no qid: column, so the file goes through
    # scikit-learn's LETOR reader into a LightGBM dataset grouped by topic.
    data = lightgbm.Dataset(
        x, label=y, group=np.unique(qid, return_counts=True)[1],
        params={"verbose": -1, "min_data_in_leaf": 2},
    )  # fmt: skip
    data.construct()
    assert data.get_label().astype(int).tolist() == y.astype(int).tolist()
    assert data.num_data() == 60
    assert data.get_group().tolist() == [20, 20, 20]
    booster = lightgbm.train(
        {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 2},
        data,
        num_boost_round=5,
    )
    assert booster.predict(x.toarray()).shape == (60,)


def test_folds_partition_the_topics_and_are_seeded(world, job, tmp_path):
    export = ltr_export(job=job, rule=RULE, folds=3, seed=2)
    export.write(tmp_path)
    fold_of = export.provenance["fold_of_qid"]
    assert sorted(fold_of) == sorted(QIDS)
    assert sorted(fold_of.values()) == [1, 2, 3]
    everything = (tmp_path / "all.txt").read_text().splitlines()
    parts = []
    for k in (1, 2, 3):
        lines = (tmp_path / f"fold{k}.txt").read_text().splitlines()
        assert {line.split()[1] for line in lines} == {
            f"qid:{q}" for q, f in fold_of.items() if f == k
        }
        parts += lines
    assert sorted(parts) == sorted(everything)
    assert ltr_export(job=job, rule=RULE, folds=3, seed=2).lines == export.lines
    features = (tmp_path / "features.txt").read_text().splitlines()
    assert [f.split("\t")[1] for f in features] == list(FEATURE_NAMES)
    side = json.loads((tmp_path / "provenance.json").read_text())
    assert side["rule"] == RULE.as_dict()
    assert side["job"] == job.pk


def test_command_writes_the_set_and_refuses_bad_input(world, job, tmp_path):
    out = io.StringIO()
    call_command(
        "export_ltr", job=job.pk, rule="p:0.5", out=str(tmp_path), folds=3, stdout=out
    )
    assert "60 lines over 3 topics" in out.getvalue()
    assert (tmp_path / "fold3.txt").exists()
    with pytest.raises(CommandError, match="no matching job"):
        call_command("export_ltr", job=job.pk + 99, out=str(tmp_path))
    with pytest.raises(CommandError, match="rule 'nonsense'"):
        call_command("export_ltr", job=job.pk, rule="nonsense", out=str(tmp_path))
    with pytest.raises(CommandError, match="cannot fill 5 folds"):
        call_command("export_ltr", job=job.pk, out=str(tmp_path / "x"))
