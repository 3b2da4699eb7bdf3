"""``python -m matcher score``: the input/output contract, run as a subprocess."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
N1_TEXT = "John Kennedy was elected president in 1960"
D1_TEXT = (
    "In 1960 John Fitzgerald Kennedy was elected as the president of the United States"
)
D2_TEXT = "Nixon lost the 1960 election; Kennedy won the presidency"


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "matcher", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def nuggets(tmp_path):
    return write_jsonl(
        tmp_path / "nuggets.jsonl",
        [
            {"topic": "7", "id": "N1", "text": N1_TEXT, "grade": 2},
            {"topic": "7", "id": "N2", "text": "Bora Bora", "keywords": ["bora"]},
            {"topic": "8", "id": "S", "text": "the of in"},
        ],
    )


@pytest.fixture
def docs(tmp_path):
    return write_jsonl(
        tmp_path / "docs.jsonl",
        [
            {"docno": "D1", "text": D1_TEXT, "title": "ignored"},
            {"docno": "D2", "text": D2_TEXT},
            {"docno": "D3", "text": ""},
        ],
    )


def lines(stdout: str):
    return [json.loads(line) for line in stdout.splitlines()]


def score_pairs(nuggets, docs, tmp_path, pairs_text: str, *options):
    """``score --pairs`` with a pairs file of ``pairs_text``: (the file, the result)."""
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(pairs_text)
    return pairs, run(
        "score", "--nuggets", nuggets, "--docs", docs, "--pairs", pairs, *options
    )


def test_every_topic_document_pair_is_written_with_zero_scores_included(nuggets, docs):
    result = run("score", "--nuggets", nuggets, "--docs", docs)
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    assert [(r["topic"], r["docno"]) for r in out] == [
        ("7", "D1"),
        ("8", "D1"),
        ("7", "D2"),
        ("8", "D2"),
        ("7", "D3"),
        ("8", "D3"),
    ]
    assert all(set(r) == {"topic", "docno", "score", "nugget", "spans"} for r in out)
    d1 = out[0]
    assert d1["nugget"] == "N1"
    assert d1["score"] == pytest.approx(0.7645668419946999, abs=1e-9)
    john, kennedy = D1_TEXT.index("John"), D1_TEXT.index("Kennedy")
    elected = D1_TEXT.index("elected") + len("elected")
    president = D1_TEXT.index("president") + len("president")
    assert d1["spans"] == [[john, elected], [kennedy, president], [3, president]]
    assert out[2]["score"] == pytest.approx(0.4745536836438455, abs=1e-9)
    for zero in (out[1], out[3], out[4], out[5]):
        assert (zero["score"], zero["nugget"], zero["spans"]) == (0.0, None, [])


def test_options_change_the_scores(nuggets, docs):
    result = run(
        "score", "--nuggets", nuggets, "--docs", docs, "--lam", "1", "--k", "3"
    )
    assert lines(result.stdout)[2]["score"] == pytest.approx(2 / 3, abs=1e-9)
    raw = run(
        "score",
        "--nuggets",
        nuggets,
        "--docs",
        docs,
        "--stem",
        "none",
        "--stopwords",
        "none",
    )
    # Unstemmed and unstopped, no shingle of N1 ("was elected president", ...)
    # is complete in D2 ("election", "presidency").
    assert raw.returncode == 0
    assert lines(raw.stdout)[2] == {
        "topic": "7",
        "docno": "D2",
        "score": 0.0,
        "nugget": None,
        "spans": [],
    }


def test_a_byte_order_mark_on_the_first_line_is_ignored(nuggets, tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + json.dumps({"docno": "D1", "text": D1_TEXT}).encode() + b"\n"
    )
    result = run("score", "--nuggets", nuggets, "--docs", path, "--stem", "none")
    assert result.returncode == 0, result.stderr
    assert [r["docno"] for r in lines(result.stdout)] == ["D1", "D1"]


def test_gzip_documents_are_read(nuggets, tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"docno": "D1", "text": D1_TEXT}) + "\n")
    result = run("score", "--nuggets", nuggets, "--docs", path)
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout)[0]["score"] == pytest.approx(
        0.7645668419946999, abs=1e-9
    )


def test_pairs_restrict_and_order_the_output(nuggets, docs, tmp_path):
    _, result = score_pairs(nuggets, docs, tmp_path, "8 D2\n7 D2\n7 D1\n")
    assert result.returncode == 0, result.stderr
    assert [(r["topic"], r["docno"]) for r in lines(result.stdout)] == [
        ("7", "D1"),
        ("8", "D2"),
        ("7", "D2"),
    ]


def test_a_pair_with_a_topic_without_nuggets_scores_zero_with_a_warning(
    nuggets, docs, tmp_path
):
    pairs, result = score_pairs(nuggets, docs, tmp_path, "99 D1\n", "--stem", "none")
    assert result.returncode == 0
    assert lines(result.stdout) == [
        {"topic": "99", "docno": "D1", "score": 0.0, "nugget": None, "spans": []}
    ]
    assert f"{pairs}:1: warning: topic 99 has no nuggets" in result.stderr


def test_a_pair_naming_an_absent_document_is_an_error(nuggets, docs, tmp_path):
    pairs, result = score_pairs(
        nuggets, docs, tmp_path, "7 D1\n7 D9\n", "--stem", "none"
    )
    assert result.returncode == 2
    assert result.stderr == f"{pairs}:2: document D9 not found in {docs}\n"


BAD_NUGGETS = [
    (
        '{"topic": "1", "id": "a", "text": "x"}\n{"topic": "1", "id": "b", "text": \n',
        2,
        "invalid JSON",
    ),
    ('{"topic": "1", "id": "a"}\n', 1, 'missing field "text"'),
    ('{"topic": "1", "text": "x"}\n', 1, 'missing field "id"'),
    ('{"id": "a", "text": "x"}\n', 1, 'missing field "topic"'),
    ('{"topic": 1, "id": "a", "text": "x"}\n', 1, 'field "topic" must be a string'),
    ('{"topic": "1", "id": 3, "text": "x"}\n', 1, 'field "id" must be a string'),
    ('{"topic": "1", "id": "a", "text": null}\n', 1, 'field "text" must be a string'),
    (
        '\n\n{"topic": "1", "id": "a", "text": "x", "keywords": "x"}\n',
        3,
        'field "keywords" must be a list of strings',
    ),
    (
        '{"topic": "1", "id": "a", "text": "x", "grade": "high"}\n',
        1,
        'field "grade" must be an integer',
    ),
    (
        '{"topic": "1", "id": "a", "text": "x", "grade": true}\n',
        1,
        'field "grade" must be an integer',
    ),
    ('["topic", "id"]\n', 1, "expected a JSON object"),
    (
        '{"topic": "1", "id": "a", "text": "x"}\n{"topic": "1", "id": "a", "text": "y"}\n',
        2,
        'duplicate nugget id "a"',
    ),
    ('{"topic": "", "id": "a", "text": "x"}\n', 1, 'field "topic" must not be empty'),
]


@pytest.mark.parametrize(("content", "line", "problem"), BAD_NUGGETS)
def test_a_bad_nuggets_file_exits_2_naming_file_and_line_and_prints_nothing(
    content, line, problem, docs, tmp_path
):
    path = tmp_path / "nuggets.jsonl"
    path.write_text(content, encoding="utf-8")
    result = run("score", "--nuggets", path, "--docs", docs)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"{path}:{line}: {problem}")
    assert result.stderr.count("\n") == 1


def test_nuggets_that_are_not_utf8_are_refused(docs, tmp_path):
    path = tmp_path / "nuggets.jsonl"
    path.write_bytes(b'{"topic": "1", "id": "a", "text": "caf\xe9"}\n')
    result = run("score", "--nuggets", path, "--docs", docs)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(f"{path}:1: not UTF-8")


def test_an_unreadable_file_is_named(docs, tmp_path):
    missing = tmp_path / "absent.jsonl"
    result = run("score", "--nuggets", missing, "--docs", docs)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(
        f"{missing}:0: cannot open: No such file or directory"
    )
    result = run("score", "--nuggets", tmp_path, "--docs", docs)
    assert result.returncode == 2
    assert result.stderr.startswith(f"{tmp_path}:0: cannot open")


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        (
            '{"docno": "D1", "text": "x"}\n{"docno": "D2", "text": "y"}\n{"docno": "D3", \n',
            3,
            "invalid JSON",
        ),
        ('{"docno": "D1"}\n', 1, 'missing field "text"'),
        ('{"text": "x"}\n', 1, 'missing field "docno"'),
        ('{"docno": 5, "text": "x"}\n', 1, 'field "docno" must be a string'),
        ('"just a string"\n', 1, "expected a JSON object"),
    ],
)
def test_a_bad_documents_file_exits_2_naming_file_and_line(
    content, line, problem, nuggets, tmp_path
):
    path = tmp_path / "docs.jsonl"
    path.write_text(content, encoding="utf-8")
    # Stemming plays no part here; skipping it keeps the test fast.
    result = run("score", "--nuggets", nuggets, "--docs", path, "--stem", "none")
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}:{line}: {problem}")
    # Documents before the bad line were scored and written (streaming).
    assert len(result.stdout.splitlines()) == 2 * (line - 1)


def test_a_truncated_gzip_file_is_an_error(nuggets, tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    data = gzip.compress(
        b"".join(
            json.dumps({"docno": f"D{i}", "text": D1_TEXT * 5}).encode() + b"\n"
            for i in range(200)
        )
    )
    path.write_bytes(data[: len(data) // 2])
    result = run("score", "--nuggets", nuggets, "--docs", path, "--stem", "none")
    assert result.returncode == 2
    assert result.stderr.startswith(f"{path}:")
    assert "cannot read" in result.stderr


def test_a_bad_pairs_file_exits_2_before_any_output(nuggets, docs, tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("7 D1\n7 D2 extra\n")
    result = run("score", "--nuggets", nuggets, "--docs", docs, "--pairs", pairs)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"{pairs}:2: expected 2 fields (topic docno), got 3\n"
    pairs.write_text("7 D1\n7 D1\n")
    result = run("score", "--nuggets", nuggets, "--docs", docs, "--pairs", pairs)
    assert result.stderr == f"{pairs}:2: duplicate pair 7 D1 (first on line 1)\n"


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        (["--k", "0"], "--k: must be an integer >= 1"),
        (["--k", "two"], "argument --k: invalid int value"),
        (["--lam", "0"], "--lam: must be in (0, 1]"),
        (["--lam", "1.5"], "--lam: must be in (0, 1]"),
        (["--stem", "snowball"], "argument --stem: invalid choice"),
        (["--stopwords", "french"], "argument --stopwords: invalid choice"),
        (["--unknown"], "unrecognized arguments: --unknown"),
    ],
)
def test_a_bad_option_exits_2_with_one_line(option, problem, nuggets, docs):
    result = run("score", "--nuggets", nuggets, "--docs", docs, *option)
    assert (result.returncode, result.stdout) == (2, "")
    assert problem in result.stderr
    assert result.stderr.count("\n") == 1


def test_missing_required_arguments_exit_2():
    result = run("score", "--docs", "x.jsonl")
    assert result.returncode == 2
    assert "--nuggets" in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_real_collection_is_scored_pair_by_pair(shared_data, tmp_path):
    """Cranfield query 1 as a nugget against all 1400 real abstracts."""
    topic = json.loads(
        (shared_data / "cranfield" / "topics.jsonl").read_text().splitlines()[0]
    )
    nuggets = write_jsonl(
        tmp_path / "nuggets.jsonl",
        [{"topic": topic["qid"], "id": "q", "text": topic["title"]}],
    )
    docs = shared_data / "cranfield" / "docs.jsonl.gz"
    result = run("score", "--nuggets", nuggets, "--docs", docs)
    assert result.returncode == 0, result.stderr
    out = lines(result.stdout)
    with gzip.open(docs, "rt", encoding="utf-8") as handle:
        texts = {r["docno"]: r["text"] for r in map(json.loads, handle)}
    assert [r["docno"] for r in out] == list(texts)
    relevant = {
        line.split()[2]
        for line in (shared_data / "cranfield" / "qrels.txt").read_text().splitlines()
        if line.split()[0] == topic["qid"]
    }
    mean = {
        flag: sum(r["score"] for r in out if (r["docno"] in relevant) == flag)
        / sum(1 for r in out if (r["docno"] in relevant) == flag)
        for flag in (True, False)
    }
    # Inferred relevance should favour the assessed relevant documents.
    assert mean[True] > mean[False]
    for record in out:
        for start, end in record["spans"]:
            assert 0 <= start < end <= len(texts[record["docno"]])


def test_bulk_output_is_byte_for_byte_the_documented_json(shared_data, tmp_path):
    """Lines are formatted without json.dumps per pair and written a few thousand at a
    time; they must equal ``format_result`` (json.dumps) exactly, past a write batch."""
    from matcher import DocumentMatch
    from matcher.io import format_result

    topics = ['q "1"', "θέμα\\2", "3"]
    nuggets = write_jsonl(
        tmp_path / "nuggets.jsonl",
        [
            {"topic": t, "id": f"n{i}·{j}", "text": text}
            for i, t in enumerate(topics)
            for j, text in enumerate(
                ["boundary layer flow over a flat plate", "supersonic heat transfer"]
            )
        ],
    )
    docs = tmp_path / "docs.jsonl"
    with gzip.open(shared_data / "cranfield" / "docs.jsonl.gz", "rt") as handle:
        write_jsonl(
            docs,
            [
                {"docno": f"«{r['docno']}»", "text": r["text"]}
                for r in map(json.loads, handle)
            ],
        )
    result = run("score", "--nuggets", nuggets, "--docs", docs)
    assert result.returncode == 0, result.stderr
    written = result.stdout.splitlines()
    assert len(written) == 3 * 1400
    assert sum(json.loads(line)["score"] > 0 for line in written) > 100
    for line in written:
        r = json.loads(line)
        match = DocumentMatch(
            r["score"], r["nugget"], tuple(tuple(span) for span in r["spans"])
        )
        assert line == format_result(r["topic"], r["docno"], match)
