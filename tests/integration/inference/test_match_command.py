"""``manage.py match``: launch, status, cancel, re-score, and its error messages."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.models import MatchJob
from tests.integration.worlds.cranfield_pool import cranfield_world, run_inline

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor)


def _match(*args: str) -> str:
    out = StringIO()
    call_command("match", *args, stdout=out)
    return out.getvalue()


def test_match_launches_a_job_with_a_nugget_filter(world, settings, assessor):
    settings.MATCH_CHUNK_SIZE = 10
    text = _match(
        "--collection", world.collection.name, "--pool", "depth", "--topics", "2",
        "--k", "2", "--lam", "0.7", "--assessor", assessor.username, "--grade", "1",
    )  # fmt: skip
    job = MatchJob.objects.get()
    assert text == f"job {job.pk}: 3 chunks, 24 documents\n"
    assert (job.k, job.lam, job.source) == (2, 0.7, "pool")
    assert job.nugget_filter == {"assessors": [assessor.pk], "grades": [1]}
    run_inline(job)
    assert _match("--status", str(job.pk)).startswith(
        f"job {job.pk}: done, 3/3 chunks, 24/24 documents"
    )
    rescored = _match("--rescore", str(job.pk), "--lam", "0.3")
    assert rescored.startswith(f"job {job.pk}: lambda 0.3, ")
    job.refresh_from_db()
    assert job.lam == 0.3


def test_match_cancels_a_job(world):
    _match("--collection", world.collection.name, "--all-docs")
    job = MatchJob.objects.get()
    assert job.docs_total == 2 * job.collection.documents.count()
    assert _match("--cancel", str(job.pk)) == f"job {job.pk}: cancelled\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "nope", "--all-docs"], "unknown collection nope"),
        (["--collection", "cranfield-jobs"], "say which documents"),
        (["--collection", "cranfield-jobs", "--pool", "x"], "unknown pool x"),
        (["--collection", "cranfield-jobs", "--all-docs", "--topics", "99"],
         "unknown topics: 99"),
        (["--collection", "cranfield-jobs", "--all-docs", "--lam", "1.5"],
         r"lambda must be in \(0, 1\], got 1.5"),
        (["--status", "12345"], "no job 12345"),
    ],
)  # fmt: skip
def test_match_explains_what_is_wrong(world, args, message):
    with pytest.raises(CommandError, match=message):
        _match(*args)
    assert not MatchJob.objects.exists()


def test_match_refuses_a_sample_name_shared_by_two_pools(world):
    from tests.factories import PoolFactory, SampleFactory

    for pool in (world.pool, PoolFactory(collection=world.collection, name="other")):
        SampleFactory(pool=pool, name="twin")
    with pytest.raises(CommandError, match="several samples named twin"):
        _match("--collection", world.collection.name, "--sample", "twin")
    assert not MatchJob.objects.exists()


def test_prels_of_a_pool_job_say_why_not_none(world):
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    with pytest.raises(CommandError) as refused:
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind", "prels",
            "--job", str(job.pk),
        )  # fmt: skip
    message = str(refused.value)
    assert "None" not in message
    assert (
        f"job {job.pk} ran over pool, not a sample; name a sample (--sample)" in message
    )
    with pytest.raises(
        CommandError, match=r"^prels come from a sample: name one .*--sample"
    ):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind", "prels"
        )


def test_an_aspect_no_nugget_has_is_refused_by_the_command(world):
    with pytest.raises(CommandError, match=r"unknown aspects: 'output, cost'"):
        _match(
            "--collection", world.collection.name, "--pool", "depth",
            "--aspect", "output, cost",
        )  # fmt: skip


def test_match_with_the_broker_down_is_a_clear_error_and_saves_nothing(
    world, broker_down
):
    with pytest.raises(CommandError) as error:
        _match("--collection", world.collection.name, "--pool", "depth")
    assert "the task broker at redis://127.0.0.1:9/" in str(error.value)
    assert "Nothing was launched" in str(error.value)
    assert not MatchJob.objects.exists()


@pytest.fixture
def in_process():
    """Tasks run in this process, as without a broker (``make run``)."""
    from nuggets_app.celery import app

    saved = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.mark.django_db(transaction=True)
def test_match_wait_shows_the_jobs_own_rate_and_no_celery_info_lines(
    shared_data, assessor, settings, in_process, capfd
):
    import re

    settings.MATCH_CHUNK_SIZE = 10
    world = cranfield_world(shared_data, assessor)
    out, err = StringIO(), StringIO()
    call_command(
        "match", "--collection", world.collection.name, "--pool", "depth", "--wait",
        stdout=out, stderr=err,
    )  # fmt: skip
    job = MatchJob.objects.get()
    summary = re.search(r"documents, ([\d.]+) docs/s", out.getvalue())
    assert summary, out.getvalue()
    bar = err.getvalue().replace("\r", "\n").strip().splitlines()[-1]
    assert bar.startswith(f"job {job.pk}: 100%"), bar
    # The bar's rate is the summary's (the job's documents over its elapsed time).
    assert bar.endswith(f", {summary.group(1)} docs/s]"), (bar, out.getvalue())
    captured = capfd.readouterr()
    celery_info = [
        line
        for line in (captured.err + captured.out + err.getvalue()).splitlines()
        if " INFO celery" in line
    ]
    assert celery_info == []
