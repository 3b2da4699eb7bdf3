"""``manage.py statap``: NIST's text byte for byte, TSV lines, options, bad input."""

import gzip
import io
import random
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

DATA = Path(__file__).resolve().parents[2] / "data" / "ir"
PRELS = str(DATA / "tiny.prels")
RUN = str(DATA / "tiny.run")


def statap(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("statap", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def rows(text: str) -> dict[tuple[str, str], str]:
    return {
        (m, q): v
        for m, q, v in (line.split("\t") for line in text.splitlines())
        if m != "run"
    }


def test_nist_output_equals_the_scripts_long_text():
    out, _ = statap("--nist-output", "--per-topic", PRELS, RUN)
    assert out == (DATA / "tiny.q.expected").read_text()


def test_nist_terse_output_equals_the_scripts_and_summary_goes_to_stderr():
    out, err = statap("--nist-output", "--per-topic", "--terse", PRELS, RUN)
    assert out == (DATA / "tiny.qt.expected").read_text()
    assert (
        "statMAP_on_valid_topics=0.764666666666667 ( VAR_MAP=0.121634161135802 )" in err
    )


def test_tab_lines_carry_the_means_and_the_interval():
    out, _ = statap(PRELS, RUN)
    values = rows(out)
    assert float(values["statAP", "all"]) == pytest.approx(0.764666666666667, abs=1e-12)
    assert float(values["statAP_var", "all"]) == pytest.approx(
        0.121634161135802, abs=1e-12
    )
    half = 1.96 * 0.121634161135802**0.5
    assert float(values["statAP_ci_low", "all"]) == pytest.approx(
        0.764666666666667 - half
    )
    assert float(values["statAP_ci_high", "all"]) == pytest.approx(
        0.764666666666667 + half
    )
    assert values["valid_topics", "all"] == "2"
    assert ("statAP", "1") not in values


def test_per_topic_lines_follow_the_hand_derivation():
    values = rows(statap("--per-topic", PRELS, RUN)[0])
    assert float(values["statAP", "1"]) == pytest.approx(0.446, abs=1e-12)
    assert float(values["estR", "1"]) == pytest.approx(6.25, abs=1e-12)
    assert float(values["statRprec", "2"]) == pytest.approx(5 / 6, abs=1e-12)
    assert float(values["statAP_var", "1"]) == pytest.approx(0.037076768, abs=1e-12)


@pytest.mark.parametrize(
    ("flag", "valid", "stat_map"),
    [("-f", "2", 0.530692307692308), ("-n", "1", 0.446), ("-m", "1", 1.08333333333333)],
)
def test_script_options(flag, valid, stat_map):
    values = rows(statap(flag, PRELS, RUN)[0])
    assert values["valid_topics", "all"] == valid
    assert float(values["statAP", "all"]) == pytest.approx(stat_map, abs=1e-12)


def test_several_runs_get_a_run_line_each(tmp_path):
    other = tmp_path / "other.run"
    other.write_text(Path(RUN).read_text().replace(" tiny", " other"))
    out, _ = statap(PRELS, RUN, str(other))
    assert [line for line in out.splitlines() if line.startswith("run\t")] == [
        "run\ttiny",
        "run\tother",
    ]


def test_a_bad_prels_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.prels"
    bad.write_text("1 d1 1 1 0.5\n1 d2 x 1 0.5\n")
    with pytest.raises(CommandError, match=r"bad\.prels:2: "):
        statap(str(bad), RUN)


def test_a_run_with_a_topic_split_in_two_is_rejected(tmp_path):
    split = tmp_path / "split.run"
    split.write_text("1 Q0 d1 1 3 t\n2 Q0 e1 1 2 t\n1 Q0 d2 2 1 t\n")
    with pytest.raises(CommandError, match=r"split\.run:3: topic 1 is not contiguous"):
        statap(PRELS, str(split))


def test_real_web09_prels_with_a_generated_run(shared_data, tmp_path):
    prels = shared_data / "trec-web09-prels" / "prels.web.1-50.txt.gz"
    rng = random.Random(5)
    lines = []
    with gzip.open(prels, "rt") as handle:
        docs: dict[str, list[str]] = {}
        for line in handle:
            qid, docno, *_ = line.split()
            docs.setdefault(qid, []).append(docno)
    for qid, docnos in docs.items():
        rng.shuffle(docnos)
        lines += [f"{qid} Q0 {d} {i} {1000 - i} gen\n" for i, d in enumerate(docnos, 1)]
    run = tmp_path / "gen.run"
    run.write_text("".join(lines))
    out, _ = statap("--nist-output", str(prels), str(run))
    assert "\n valid_topics=49" in out
    values = rows(statap(str(prels), str(run))[0])
    low, high = (
        float(values["statAP_ci_low", "all"]),
        float(values["statAP_ci_high", "all"]),
    )
    assert low < float(values["statAP", "all"]) < high
