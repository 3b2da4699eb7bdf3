"""``manage.py compare_qrels`` on the real Cranfield runs: tau, tau_AP, moves, the
SVG scatter."""

import io
from itertools import combinations

import ir_measures
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy import stats

from tests.integration.evaluation.stored import store
from tests.svg_charts import axis, chart_root, child, groups

RUNS = [
    "alpha-rerank-boost0.5-top100",
    "kidus-hw1-bm25",
    "kidus-hw1-tfidf",
    "kidus-hw1-laplace",
    "kidus-hw1-okapitf",
    "ruth-english-analyzer-100",
]


def compare(*args: str) -> tuple[dict[str, str], list[list[str]]]:
    out = io.StringIO()
    call_command("compare_qrels", *args, stdout=out)
    head, moves, in_moves = {}, [], False
    for line in out.getvalue().splitlines():
        fields = line.split("\t")
        if fields[0] == "run":
            in_moves = True
        elif in_moves:
            moves.append(fields)
        else:
            head[fields[0]] = fields[1]
    return head, moves


@pytest.fixture
def cranfield(shared_data, tmp_path):
    """Full qrels (A), every other relevant document per topic (B), six real runs."""
    folder = shared_data / "cranfield"
    full = folder / "qrels.txt"
    lines = full.read_text().splitlines()
    half = tmp_path / "half.qrels"
    half.write_text("".join(f"{line}\n" for line in lines[::2]))
    runs = [folder / "runs" / f"{name}.run.gz" for name in RUNS]
    return full, half, runs


def mean_ap(qrels_path, run_path) -> float:
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    return ir_measures.calc_aggregate([ir_measures.AP], qrels, run)[ir_measures.AP]


def tau_ap_by_pairs(reference: list[str], candidate: list[str]) -> float:
    """Brute force from the definition: for each i, pairs (j < i) agreeing with reference."""
    position = {r: k for k, r in enumerate(reference)}
    n = len(candidate)
    total = 0.0
    for i in range(1, n):
        agree = sum(
            1
            for j, k in combinations(range(i + 1), 2)
            if k == i and position[candidate[j]] < position[candidate[k]]
        )
        total += agree / i
    return 2 * total / (n - 1) - 1


def test_tau_and_tau_ap_between_full_and_halved_qrels(cranfield):
    full, half, runs = cranfield
    head, moves = compare("--qrels", str(full), "--qrels-b", str(half), *map(str, runs))
    a = {name: mean_ap(full, path) for name, path in zip(RUNS, runs, strict=True)}
    b = {name: mean_ap(half, path) for name, path in zip(RUNS, runs, strict=True)}
    assert head["measure"] == "AP"
    assert head["runs"] == "6"
    names = sorted(RUNS)
    expected_tau = stats.kendalltau(
        [a[n] for n in names], [b[n] for n in names]
    ).statistic
    assert float(head["kendall_tau"]) == pytest.approx(expected_tau, abs=1e-12)
    rank_a = sorted(RUNS, key=lambda n: -a[n])
    rank_b = sorted(RUNS, key=lambda n: -b[n])
    assert float(head["tau_ap"]) == pytest.approx(
        tau_ap_by_pairs(rank_a, rank_b), abs=1e-12
    )
    by_run = {m[0]: m for m in moves}
    for name in RUNS:
        assert float(by_run[name][1]) == pytest.approx(a[name], abs=1e-12)
        assert float(by_run[name][2]) == pytest.approx(b[name], abs=1e-12)
        assert int(by_run[name][3]) == rank_a.index(name) + 1
        assert int(by_run[name][4]) == rank_b.index(name) + 1
    deltas = [abs(int(m[5])) for m in moves]
    assert deltas == sorted(deltas, reverse=True)


def test_the_same_qrels_agree_perfectly_and_the_plot_is_the_svg_scatter(
    cranfield, tmp_path
):
    full, _half, runs = cranfield
    plot = tmp_path / "scatter.svg"
    head, moves = compare(
        "--qrels",
        str(full),
        "--qrels-b",
        str(full),
        *map(str, runs),
        "--plot",
        str(plot),
    )
    assert float(head["kendall_tau"]) == pytest.approx(1.0)
    assert float(head["tau_ap"]) == pytest.approx(1.0)
    assert {m[5] for m in moves} == {"+0"}
    # The compare page's scatter: one point per run, where its two scores are.
    root = chart_root(plot.read_text(encoding="utf-8"))
    to_x, to_y = axis(root, "x"), axis(root, "y")
    points = {g.get("data-name"): child(g, "circle") for g in groups(root, "point")}
    assert set(points) == {m[0] for m in moves}
    for m in moves:
        dot = points[m[0]]
        assert to_x(float(dot.get("cx"))) == pytest.approx(float(m[1]), abs=2e-3)
        assert to_y(float(dot.get("cy"))) == pytest.approx(float(m[2]), abs=2e-3)


def test_the_plot_is_svg_only(cranfield, tmp_path):
    full, _half, runs = cranfield
    with pytest.raises(CommandError, match=r"FILE\.svg"):
        compare("--qrels", str(full), "--qrels-b", str(full), *map(str, runs),
                "--plot", str(tmp_path / "scatter.png"))  # fmt: skip
    assert not (tmp_path / "scatter.png").exists()


def test_it_needs_two_runs(cranfield):
    full, half, runs = cranfield
    with pytest.raises(CommandError, match="at least two runs"):
        compare("--qrels", str(full), "--qrels-b", str(half), str(runs[0]))


@pytest.mark.django_db
def test_database_mode_equals_file_mode(cranfield):
    full, half, runs = cranfield
    store(
        "cranfield",
        qrels={"full": full, "half": half},
        runs=dict(zip(RUNS[:3], runs[:3], strict=True)),
    )
    out_db = compare(
        "--collection", "cranfield", "--qrels-name", "full", "--qrels-name-b", "half"
    )
    out_files = compare(
        "--qrels", str(full), "--qrels-b", str(half), *map(str, runs[:3])
    )
    assert out_db == out_files


def test_means_are_over_the_topics_both_qrels_judge(cranfield, tmp_path):
    full, _half, runs = cranfield
    lines = full.read_text().splitlines()
    qids = sorted({line.split()[0] for line in lines}, key=int)
    dropped = set(qids[:5])
    part = tmp_path / "part.qrels"
    part.write_text("".join(f"{x}\n" for x in lines if x.split()[0] not in dropped))
    cut = tmp_path / "cut.qrels"  # A restricted to B's topics, by hand
    cut.write_text(part.read_text())
    err = io.StringIO()
    out = io.StringIO()
    call_command(
        "compare_qrels", "--qrels", str(full), "--qrels-b", str(part),
        *map(str, runs), stdout=out, stderr=err,
    )  # fmt: skip
    head = dict(line.split("\t")[:2] for line in out.getvalue().splitlines()[:3])
    assert head["topics"] == str(len(qids) - 5)
    left_out = ", ".join(sorted(dropped, key=int))
    assert f"left out, judged only in A: {left_out}." in err.getvalue()
    rows = {f[0]: f for f in (x.split("\t") for x in out.getvalue().splitlines()[7:])}
    for name, path in zip(RUNS, runs, strict=True):
        # Both columns are means over the same topics: A's equals B's here.
        assert float(rows[name][1]) == pytest.approx(mean_ap(cut, path), abs=1e-12)
        assert float(rows[name][2]) == pytest.approx(mean_ap(cut, path), abs=1e-12)
    assert {rows[name][5] for name in RUNS} == {"+0"}


def test_it_refuses_qrels_with_no_topic_in_common(cranfield, tmp_path):
    full, _half, runs = cranfield
    other = tmp_path / "other.qrels"
    other.write_text("9001 0 d1 1\n")
    with pytest.raises(CommandError, match=r"judge no topic in common \(A: 1, 2, "):
        compare("--qrels", str(full), "--qrels-b", str(other), *map(str, runs))


def test_a_missing_file_is_worded_as_every_command_words_it(cranfield):
    full, _half, runs = cranfield
    with pytest.raises(CommandError) as error:
        compare("--qrels", "nope.qrels", "--qrels-b", str(full), *map(str, runs))
    assert str(error.value) == "nope.qrels: no such file or directory"
    with pytest.raises(CommandError) as error:
        compare("--qrels", str(full), "--qrels-b", str(full), "nope.run", str(runs[0]))
    assert str(error.value) == "nope.run: no such file or directory"
