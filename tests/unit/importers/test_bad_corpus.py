"""The golden malformed corpus: every file fails with its documented line and problem."""

import json
import random
import re

import pytest

from nuggets_app.errors import DomainError
from nuggets_app.importers import (
    ImportFormatError,
    parse_collection,
    parse_qrels,
    parse_run,
    parse_topics,
)
from tests.conftest import TEST_DATA

BAD = TEST_DATA / "bad"
EXPECTED = json.loads((BAD / "expected.json").read_text())
PARSERS = {
    "collection": parse_collection,
    "topics": parse_topics,
    "run": parse_run,
    "qrels": parse_qrels,
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bad_file_fails_with_its_line_and_problem(name):
    case = EXPECTED[name]
    path = BAD / name
    with pytest.raises(ImportFormatError) as caught:
        list(PARSERS[case["parser"]](path))
    error = caught.value
    assert case["error"] in str(error)
    if case["line"] is not None:
        assert error.line == case["line"]
        assert re.match(rf"{re.escape(str(path))}:{case['line']}(:\d+)?: ", str(error))


def test_the_corpus_has_no_file_without_an_expectation():
    files = {p.name for p in BAD.iterdir() if p.name != "expected.json"}
    assert files == set(EXPECTED)


def test_error_lines_count_newlines_like_wc():
    # The run with a lone CR on line 3: text-mode reading would see 4 lines.
    path = BAD / "run_lone_cr.run"
    assert path.read_bytes().count(b"\n") == 3
    with pytest.raises(ImportFormatError, match=r":3: "):
        list(parse_run(path))


def test_offending_text_is_escaped_so_no_terminal_escape_gets_through():
    with pytest.raises(ImportFormatError) as caught:
        list(parse_collection(BAD / "sgml_docno_control.trec"))
    message = str(caught.value)
    assert "\x1b" not in message
    assert "\\x1b[31m" in message


def test_offending_text_is_truncated_to_80_characters(tmp_path):
    path = tmp_path / "long.run"
    path.write_text("1 Q0 d1 1 " + "9" * 500 + "x tag\n")
    with pytest.raises(ImportFormatError) as caught:
        list(parse_run(path))
    got = str(caught.value).split("got ", 1)[1].rstrip(")")
    assert len(got) <= 80


def test_utf16_file_is_accepted_when_its_encoding_is_given():
    docs = list(parse_collection(BAD / "jsonl_utf16_bom.jsonl", encoding="utf-16"))
    assert [d.docno for d in docs] == ["d1", "d2"]


def test_latin1_file_is_accepted_with_encoding_latin1():
    docs = list(parse_collection(BAD / "jsonl_latin1.jsonl", encoding="latin-1"))
    assert docs[1].text == "caf\u00e9 cr\u00e8me"


def test_latin1_error_suggests_an_encoding():
    with pytest.raises(ImportFormatError, match="try --encoding"):
        list(parse_collection(BAD / "jsonl_latin1.jsonl"))


def test_encoding_errors_replace_counts_the_replacements():
    from nuggets_app.importers.textio import ReadStats

    stats = ReadStats()
    path = BAD / "jsonl_latin1.jsonl"
    docs = list(parse_collection(path, encoding_errors="replace", stats=stats))
    assert docs[1].text == "caf\ufffd cr\ufffdme"
    assert stats.replaced == 2


def test_five_megabytes_of_binary_garbage_is_refused(tmp_path):
    path = tmp_path / "garbage.trec"
    path.write_bytes(random.Random(7).randbytes(5 * 1024 * 1024))
    with pytest.raises(ImportFormatError) as caught:
        list(parse_collection(path, fmt="trec"))
    assert caught.value.line >= 1


@pytest.mark.slow
def test_a_100_megabyte_single_line_is_refused_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"docno": "d1", "text": "')
        block = b"x" * (1024 * 1024)
        for _ in range(100):
            handle.write(block)
        handle.write(b'"}\n')
    with pytest.raises(ImportFormatError, match="line longer than") as caught:
        list(parse_collection(path))
    assert caught.value.line == 1


def test_an_unknown_encoding_is_a_value_error():
    with pytest.raises(DomainError, match="unknown encoding"):
        list(parse_run(BAD / "run_empty.run", encoding="no-such-codec"))
