"""manage.py build_pool: the pool and its printed summary; errors name the problem."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.models import Pool
from tests.integration.pooling.test_pools import make_runs

pytestmark = pytest.mark.django_db


def build_pool(*args: str) -> str:
    out = StringIO()
    call_command("build_pool", *args, stdout=out, verbosity=0)
    return out.getvalue()


@pytest.fixture
def collection():
    collection, _ = make_runs(
        {
            "1": {"run1": list("abcd"), "run2": list("cae")},
            "2": {"run1": list("xyz"), "run2": list("zw")},
        }
    )
    return collection


def test_build_pool_prints_sizes_per_topic_and_single_run_documents(collection):
    output = build_pool(
        "--collection",
        collection.name,
        "--all-runs",
        "--depth",
        "10",
        "--name",
        "p",
        "--per-topic",
    )
    # Topic 1: a b c d e, of which b, d, e come from one run; topic 2: x y z w, z shared.
    assert "pool p: depth 10, 2 runs, 2 topics, 9 documents" in output
    assert "documents contributed by only one run: 6 (66.7%)" in output
    assert "1\t5\t3" in output
    assert "2\t4\t3" in output
    assert Pool.objects.get(name="p").runs.count() == 2


def test_build_pool_with_chosen_runs_and_depth(collection):
    output = build_pool(
        "--collection", collection.name, "--runs", "run2", "--depth", "1", "--name", "q"
    )
    assert "pool q: depth 1, 1 runs, 2 topics, 2 documents" in output


def test_unknown_names_are_errors(collection):
    with pytest.raises(CommandError, match="unknown collection nope"):
        build_pool("--collection", "nope", "--all-runs", "--depth", "5", "--name", "x")
    with pytest.raises(CommandError, match=r"unknown runs in collection .*: run9"):
        build_pool(
            "--collection",
            collection.name,
            "--runs",
            "run1",
            "run9",
            "--depth",
            "5",
            "--name",
            "x",
        )
    with pytest.raises(CommandError, match="depth must be at least 1"):
        build_pool(
            "--collection", collection.name, "--all-runs", "--depth", "0", "--name", "x"
        )
    assert not Pool.objects.exists()


def test_build_pool_of_chosen_topics(collection):
    output = build_pool(
        "--collection", collection.name, "--all-runs", "--depth", "10",
        "--name", "t", "--topics", "2", "--per-topic",
    )  # fmt: skip
    assert "pool t: depth 10, 2 runs, 1 topics, 4 documents" in output
    assert "2\t4\t3" in output
    with pytest.raises(CommandError, match=r"unknown topics in collection .*: 7"):
        build_pool(
            "--collection", collection.name, "--all-runs", "--depth", "10",
            "--name", "u", "--topics", "2", "7",
        )  # fmt: skip
    assert not Pool.objects.filter(name="u").exists()
