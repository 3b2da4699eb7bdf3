"""manage.py evaluate_passages: the worked examples of docs/reference/algorithms.md 5.1 and 5.2, bad
input, and passage qrels taken from nugget spans in the database."""

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.models import Nugget
from tests.conftest import TEST_DATA

DATA = TEST_DATA / "evaluation"


def _run(*args: str) -> dict[tuple[str, str], float]:
    out = io.StringIO()
    call_command("evaluate_passages", *args, stdout=out)
    values = {}
    for line in out.getvalue().splitlines():
        measure, topic, value = line.split("\t")
        values[(measure, topic)] = float(value)
    return values


def test_it_reproduces_the_hard_worked_example():
    values = _run(
        "--passage-qrels", str(DATA / "hard.passage-qrels"),
        "--docs", str(DATA / "hard-docs.jsonl"), "--n", "5",
        str(DATA / "hard.passage-run"),
    )  # fmt: skip
    expected = {
        "relevant_chars": 10,
        "retrieved_chars": 19,
        "char_P@min(N,R)": 0.6,
        "char_Rprec": 0.5,
        "char_bpref@R": 0.47,
        "char_bpref@min(N,R)": 0.36,
        "char_AP": 0.3977153891859774,
    }
    for measure, value in expected.items():
        assert values[(measure, "1")] == pytest.approx(value, abs=1e-9), measure
        assert values[(measure, "all")] == pytest.approx(value, abs=1e-9), measure


def test_p_at_min_n_r_uses_r_when_n_is_larger():
    values = _run(
        "--passage-qrels", str(DATA / "hard.passage-qrels"),
        "--docs", str(DATA / "hard-docs.jsonl"), "--n", "12",
        str(DATA / "hard.passage-run"),
    )  # fmt: skip
    # min(12, R = 10) = 10: P@10 is the character R-precision of the example.
    assert values[("char_P@min(N,R)", "1")] == pytest.approx(0.5, abs=1e-9)


def test_it_reproduces_the_inex_worked_example():
    values = _run(
        "--passage-qrels", str(DATA / "inex.passage-qrels"),
        "--docs", str(DATA / "inex-docs.jsonl"), str(DATA / "inex.passage-run"),
    )  # fmt: skip
    assert values[("AgP", "7")] == pytest.approx(0.4074074074074074, abs=1e-9)
    assert values[("AgP'", "7")] == pytest.approx(17 / 63, abs=1e-9)
    # gP[3] = (2/3 + 0 + 1)/3 = 5/9; past the end the sum stays and r grows.
    assert values[("gP@5", "7")] == pytest.approx((5 / 3) / 5, abs=1e-9)
    assert values[("AgP", "all")] == pytest.approx(0.4074074074074074, abs=1e-9)


def test_several_runs_are_announced_by_name():
    out = io.StringIO()
    call_command(
        "evaluate_passages", "--passage-qrels", str(DATA / "hard.passage-qrels"),
        "--docs", str(DATA / "hard-docs.jsonl"), str(DATA / "hard.passage-run"),
        str(DATA / "hard.passage-run"), stdout=out,
    )  # fmt: skip
    assert [x for x in out.getvalue().splitlines() if x.startswith("run\t")] == [
        "run\thard51",
        "run\thard51",
    ]


def test_a_span_past_the_end_of_its_document_names_file_and_line(tmp_path: Path):
    run = tmp_path / "bad.run"
    run.write_text("1 A 0 5 1 5.0 t\n1 B 4 9 2 4.0 t\n")
    with pytest.raises(CommandError, match=r"bad.run:2: span 4\+9 ends past the end"):
        _run(
            "--passage-qrels", str(DATA / "hard.passage-qrels"),
            "--docs", str(DATA / "hard-docs.jsonl"), str(run),
        )  # fmt: skip


def test_bad_lines_name_file_and_line(tmp_path: Path):
    qrels = tmp_path / "p.qrels"
    qrels.write_text("1 A 2 4\n1 B zero 6\n")
    with pytest.raises(CommandError, match=r"p.qrels:2: start and length must be"):
        _run("--passage-qrels", str(qrels), "--docs", str(DATA / "hard-docs.jsonl"),
             str(DATA / "hard.passage-run"))  # fmt: skip
    run = tmp_path / "r.run"
    run.write_text("1 A 0 5 1 5.0\n")
    with pytest.raises(CommandError, match=r"r.run:1: a passage run line needs 7"):
        _run("--passage-qrels", str(DATA / "hard.passage-qrels"),
             "--docs", str(DATA / "hard-docs.jsonl"), str(run))  # fmt: skip
    with pytest.raises(CommandError, match="give --docs FILE or --collection"):
        _run("--passage-qrels", str(DATA / "hard.passage-qrels"), str(run))


@pytest.mark.django_db
def test_a_run_returning_exactly_the_nugget_spans_scores_one(world, tmp_path: Path):
    """Database mode: passage qrels from nugget offsets; the perfect run scores 1."""
    lines = []
    nuggets = Nugget.objects.filter(topic__collection=world.collection).order_by(
        "topic__qid", "document__docno"
    )
    for i, n in enumerate(nuggets.select_related("topic", "document"), 1):
        lines.append(
            f"{n.topic.qid} {n.document.docno} {n.start} {n.end - n.start} {i} "
            f"{1000 - i} perfect"
        )
    run = tmp_path / "perfect.run"
    run.write_text("\n".join(lines) + "\n")
    values = _run("--collection", world.collection.name, str(run))
    topics = {n.topic.qid for n in nuggets}
    for qid in [*topics, "all"]:
        for measure in ("char_Rprec", "char_AP", "char_bpref@R", "AgP", "AgP'"):
            assert values[(measure, qid)] == pytest.approx(1.0, abs=1e-12), (
                measure,
                qid,
            )
    assert {q for (m, q) in values if m == "char_AP"} == {*topics, "all"}
