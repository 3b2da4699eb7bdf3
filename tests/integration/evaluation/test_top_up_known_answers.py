"""A top-up over a document that is also a known answer (issue 59), on the demo data.

Known answers from the demo's qrels are interleaved in alice's queue; she judges
topic 3's ``demo-283`` as a check (0, where the qrels say 1). A new run retrieves the
document outside the pool and a top-up draws it. The check and the top-up's label are
two judgments: the top-up queue shows the document unjudged, its label never rewrites
the check, and once the top-up is judged every topic is corrected.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from nuggets_app.evaluation.services import new_runs
from nuggets_app.evaluation.services.top_ups import (
    stored_top_ups,
    top_up_draw_sample,
    top_up_statuses,
)
from nuggets_app.judging.selectors import judge_page
from nuggets_app.judging.services.judgments import judgment_record, judgment_state
from nuggets_app.judging.services.known_answers import (
    known_answers_add,
    known_answers_interleave,
)
from nuggets_app.judging.services.undo import change_undo
from nuggets_app.models import (
    Assignment,
    Judgment,
    KnownAnswer,
    Nugget,
    PoolDocument,
    Qrels,
    SampleDocument,
)
from nuggets_app.pooling.selectors import assignment_progress, workload
from tests import factories as f
from tests.integration.evaluation.test_one_path_demo import demo_job  # noqa: F401
from tests.integration.evaluation.test_outside_pool_demo import adversarial_run

pytestmark = pytest.mark.django_db
NAME = "checked"
QID, DOCNO = "3", "demo-283"


def checked_world(job, sample):
    """Known answers of topic 3 from the demo's qrels, ``demo-283`` interleaved in
    alice's queue and judged 0 as a check; a new run that ranks it first (its only
    document outside the pool on topic 3), kept and evaluated. Returns (alice, topic,
    document, run)."""
    alice = get_user_model().objects.get(username="alice")
    topic = job.topics.get(qid=QID)
    qrels = Qrels.objects.get(collection=job.collection)
    assert known_answers_add(
        collection=job.collection, source="qrels", qrels=qrels, qids=[QID],
        per_topic=100,
    )  # fmt: skip
    known = KnownAnswer.objects.get(topic=topic, document__docno=DOCNO)
    assert known.relevance == 1
    # Only demo-283 is left to interleave, so the queue holds it as a check.
    KnownAnswer.objects.filter(topic=topic).exclude(pk=known.pk).delete()
    document = known.document
    assert not PoolDocument.objects.filter(
        pool=sample.pool, topic=topic, document=document
    ).exists()
    assert known_answers_interleave(sample=sample, rate=0.1).added == {QID: 1}
    item = SampleDocument.queue.get(sample=sample, topic=topic, document=document)
    assert item.known
    assignment = Assignment.objects.get(sample=sample, topic=topic, assessor=alice)
    judgment_record(
        assessor=alice, topic=topic, document=document, relevance=0,
        slot=(assignment, item),
    )  # fmt: skip
    run = adversarial_run(job, new_runs.job_pool_runs(job))
    # Topic 3: demo-283 first, then pooled documents only, so the top-up draws it.
    in_pool = PoolDocument.objects.filter(pool=sample.pool, topic=topic)
    docnos = sorted(in_pool.values_list("document__docno", flat=True))
    run[QID] = {d: float(len(docnos) - i) for i, d in enumerate([DOCNO, *docnos])}
    kept = new_runs.new_run_keep(job=job, sample=sample, name=NAME, scores=run)
    new_runs.new_runs_evaluate(
        job=job, sample=sample, new_runs={NAME: run}, inline_max=10**6
    )
    return alice, topic, document, kept


def _judge_top_up(top_up, alice, truth, skip=None):
    """Judge every document of the top-up's queues from ``truth`` through the judging
    service, as the judging page does (its assignment and queue item)."""
    for item in SampleDocument.queue.filter(sample=top_up).select_related(
        "topic", "document"
    ):
        if (item.topic_id, item.document_id) == skip:
            continue
        assignment = Assignment.objects.get(
            sample=top_up, topic=item.topic, assessor=alice
        )
        grade = truth.get(item.topic.qid, {}).get(item.document.docno, 0)
        judgment_record(
            assessor=alice, topic=item.topic, document=item.document,
            relevance=grade, slot=(assignment, item),
        )  # fmt: skip


def test_a_top_up_over_a_checked_known_answer_can_be_completed(demo_job):  # noqa: F811
    from nuggets_app.collection.services.suite_runs import qrels_read
    from nuggets_app.demo.generate import DATA_DIR

    job, sample = demo_job
    alice, topic, document, kept = checked_world(job, sample)
    top_up = top_up_draw_sample(job=job, run=kept, size=10, seed=1, assessors=[alice])
    item = SampleDocument.queue.get(sample=top_up, topic=topic, document=document)
    assert not item.known
    assignment = Assignment.objects.get(sample=top_up, topic=topic, assessor=alice)
    # The top-up's queue shows the document unjudged: the check is not its label.
    page = judge_page(assignment=assignment, item=item, viewer=alice)
    assert page.relevance is None
    assert page.version == 0
    assert item.order not in page.judged_positions
    # My topics: the top-up's row counts the nuggets of its own documents only.
    drawn = SampleDocument.objects.filter(sample=sample, topic=topic).first()
    f.NuggetFactory(topic=topic, assessor=alice, document=drawn.document)
    first = Assignment.objects.get(sample=sample, topic=topic, assessor=alice)
    mine = Nugget.objects.filter(topic=topic, assessor=alice).count()
    rows = assignment_progress(assignments=[first, assignment])
    assert [p.nuggets for p in rows] == [mine, 0]
    f.NuggetFactory(topic=topic, assessor=alice, document=document)
    rows = assignment_progress(assignments=[first, assignment])
    assert [p.nuggets for p in rows] == [mine + 1, 1]
    truth = qrels_read(DATA_DIR / "qrels.txt")
    _judge_top_up(top_up, alice, truth, skip=(topic.pk, document.pk))
    # Everything else judged: topic 3's top-up is one document short everywhere.
    (progress,) = assignment_progress(assignments=[assignment])
    assert progress.to_judge == 1
    assert progress.resume_position == item.order
    (load,) = [a for s in workload(samples=[top_up]) for a in s.assessors]
    assert load.remaining == 1
    (status,) = top_up_statuses(run=kept)
    assert status.judged == status.documents - 1
    assert status.topics_judged == status.topics - 1
    # The page names the document topic 3 waits for.
    assert status.waiting == {QID: [DOCNO]}
    assert QID not in stored_top_ups(job=job, names=[NAME])[NAME]

    # The label is a record of its own: the check keeps its grade and role.
    check = Judgment.objects.get(
        topic=topic, document=document, assessor=alice, quality_check=True
    )
    judgment_record(
        assessor=alice, topic=topic, document=document, relevance=1,
        slot=(assignment, item),
    )  # fmt: skip
    check.refresh_from_db()
    assert (check.relevance, check.version, check.quality_check) == (0, 1, True)
    label = Judgment.objects.get(
        topic=topic, document=document, assessor=alice, quality_check=False
    )
    assert (label.relevance, label.version) == (1, 1)
    state = judgment_state(
        assessor_id=alice.pk, topic_id=topic.pk, document_id=document.pk
    )
    assert (state["relevance"], state["version"]) == (1, 1)
    check_state = judgment_state(
        assessor_id=alice.pk, topic_id=topic.pk, document_id=document.pk,
        quality_check=True,
    )  # fmt: skip
    assert (check_state["relevance"], check_state["version"]) == (0, 1)
    # The top-up is complete: every topic of it corrects the run.
    (progress,) = assignment_progress(assignments=[assignment])
    assert progress.to_judge == 0
    (status,) = top_up_statuses(run=kept)
    assert status.done
    assert status.waiting == {}
    assert status.topics_judged == status.topics
    used = stored_top_ups(job=job, names=[NAME])[NAME]
    assert used[QID][DOCNO][0] == 1
    assert len(used) == status.topics
    # Undo on the check's page takes back the check, not the later label.
    change_undo(
        actor=alice, owner_id=alice.pk, topic_id=topic.pk, document_id=document.pk,
        quality_check=True,
    )  # fmt: skip
    check.refresh_from_db()
    label.refresh_from_db()
    assert (check.relevance, label.relevance) == (None, 1)


def test_exports_say_a_person_judged_a_document_as_a_check(demo_job):  # noqa: F811
    from nuggets_app.inference.services import readiness
    from nuggets_app.inference.services.exports import (
        probabilistic_export,
        qrels_export,
    )

    job, sample = demo_job
    topic = job.topics.get(qid="6")
    qrels = Qrels.objects.get(collection=job.collection)
    known_answers_add(
        collection=job.collection, source="qrels", qrels=qrels, qids=["6"],
        per_topic=100,
    )  # fmt: skip
    known = KnownAnswer.objects.get(topic=topic, document__docno="demo-015")
    KnownAnswer.objects.filter(topic=topic).exclude(pk=known.pk).delete()
    assert known_answers_interleave(sample=sample, rate=0.1).added == {"6": 1}
    item = SampleDocument.queue.get(sample=sample, topic=topic, document=known.document)
    assignment = Assignment.objects.filter(sample=sample, topic=topic).first()
    person = assignment.assessor
    judgment_record(
        assessor=person, topic=topic, document=known.document, relevance=0,
        slot=(assignment, item),
    )  # fmt: skip
    said = [{"assessor": person.username, "rel": 0, "known": known.relevance}]
    for kind in ("inferred", "merged"):
        export = qrels_export(
            collection=job.collection, kind=kind, job=job,
            rule=readiness.rule_default(job),
        )  # fmt: skip
        assert export.provenance is not None
        (line,) = [
            r
            for r in export.provenance["lines"]
            if (r["qid"], r["docno"]) == ("6", "demo-015")
        ]
        # The model's guess stays the line (a check is no label), and the check is
        # said beside it.
        assert line["source"] == "model"
        assert line["checks"] == said
        assert export.provenance["counts"]["checked"] == 1
        assert sum("checks" in r for r in export.provenance["lines"]) == 1
    prob = probabilistic_export(job=job)
    assert prob.provenance is not None
    assert prob.provenance["checks"] == [
        {"qid": "6", "docno": "demo-015", "checks": said}
    ]
    (text,) = [x for x in prob.lines if x.startswith("6 demo-015 ")]
    assert text.endswith(" model")
