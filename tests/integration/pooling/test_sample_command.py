"""manage.py sample and manage.py assign on a small pool."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.models import Assignment, Sample, SampleDocument
from nuggets_app.pooling.services.pools import pool_build
from tests.factories import UserFactory
from tests.integration.pooling.test_pools import make_runs

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, verbosity=0)
    return out.getvalue()


@pytest.fixture
def pool():
    collection, runs = make_runs(
        {
            "1": {"r1": list("abcdefgh"), "r2": list("hgfedcba")},
            "2": {"r1": list("ijklmnop"), "r2": list("ponm")},
        }
    )
    return pool_build(collection=collection, runs=runs, depth=10, name="p")


def test_sample_draws_and_reports(pool):
    output = run("sample", "--pool", "p", "--size", "3", "--seed", "9", "--name", "s")
    assert "sample s of pool p: statap, 3 per topic, seed 9" in output
    assert "2 topics, 6 documents to judge" in output
    assert "inclusion probabilities: stop-rule-ignored" in output
    assert SampleDocument.objects.filter(sample__name="s").count() == 6


def test_sample_methods_quota_and_extension(pool):
    run("sample", "--pool", "p", "--size", "2", "--method", "depth", "--name", "d")
    assert set(
        SampleDocument.objects.filter(sample__name="d").values_list(
            "inclusion_prob", flat=True
        )
    ) == {1.0}
    output = run(
        "sample", "--pool", "p", "--size", "4", "--per-run-quota", "--name", "q"
    )
    assert "per-run quota" in output
    output = run("sample", "--pool", "p", "--name", "q", "--extend", "2")
    assert "6 per topic" in output
    assert Sample.objects.get(name="q").documents.count() == 12


def test_sample_errors_name_the_problem(pool):
    with pytest.raises(CommandError, match="unknown pool nope"):
        run("sample", "--pool", "nope", "--size", "3", "--name", "s")
    with pytest.raises(CommandError, match="--size is required"):
        run("sample", "--pool", "p", "--name", "s")
    with pytest.raises(
        CommandError,
        match=r"^a per-run quota applies to the statap method only \(--per-run-quota\)$",
    ):
        run(
            "sample",
            "--pool",
            "p",
            "--size",
            "2",
            "--method",
            "uniform",
            "--per-run-quota",
            "--name",
            "s",
        )
    with pytest.raises(CommandError, match="unknown sample s"):
        run("sample", "--pool", "p", "--name", "s", "--extend", "2")


def test_assign_round_robin_and_errors(pool):
    run("sample", "--pool", "p", "--size", "3", "--name", "s")
    UserFactory(username="alice")
    UserFactory(username="bob")
    output = run("assign", "--sample", "s", "--all", "--assessors", "alice", "bob")
    assert "alice: 1 topics (1)" in output
    assert "bob: 1 topics (2)" in output
    run(
        "assign",
        "--sample",
        "s",
        "--topics",
        "2",
        "--assessors",
        "alice",
        "bob",
        "--overlap",
        "2",
    )
    assert Assignment.objects.count() == 3
    with pytest.raises(CommandError, match="unknown users: carol"):
        run("assign", "--sample", "s", "--all", "--assessors", "alice", "carol")
    with pytest.raises(CommandError, match="unknown topics: 7"):
        run("assign", "--sample", "s", "--topics", "7", "--assessors", "alice")


def test_a_pool_name_in_two_collections_needs_the_collection(pool):
    other, runs = make_runs({"1": {"r1": list("ab")}})
    pool_build(collection=other, runs=runs, depth=10, name="p")
    with pytest.raises(CommandError, match="several collections have a pool p"):
        run("sample", "--pool", "p", "--size", "1", "--name", "s")
    where = ("--collection", other.name)
    output = run("sample", "--pool", "p", *where, "--size", "1", "--name", "s")
    assert "sample s of pool p" in output


def test_a_rounds_sample_reports_no_draw_count(pool):
    output = run("sample", "--pool", "p", "--size", "4", "--rounds", "2", "--name", "r")
    assert "1 of 2 rounds drawn" in output
    line = next(x for x in output.splitlines() if "documents to judge" in x)
    assert line == "2 topics, 4 documents to judge"


def test_an_error_comes_without_a_progress_bar_before_it(pool, capsys):
    with pytest.raises(CommandError, match="depth must be at least 1"):
        call_command(
            "build_pool", "--collection", pool.collection.name, "--all-runs",
            "--depth", "0", "--name", "x", verbosity=1,
        )  # fmt: skip
    with pytest.raises(CommandError) as error:
        call_command("sample", "--pool", "p", "--size", "0", "--name", "s", verbosity=1)
    assert capsys.readouterr().err == ""
    assert "size" in str(error.value)
