"""Reading the command line's JSON lines: every line parses as ``json.loads`` parses
it, whether it takes the scanner's fast path or not."""

import json

import pytest

from matcher.io import iter_documents
from matcher.options import MatcherError

LINES = [
    '{"docno": "D1", "text": "plain"}\n',
    '{"docno": "D2", "text": "crlf"}\r\n',
    '  {"docno": "D3", "text": "leading blanks"}\n',
    '{"docno": "D4", "text": "trailing blanks"} \t \n',
    '{"docno": "D5", "text": "caf\\u00e9 \\"quoted\\"", "n": NaN, "x": [1.5e3]}\n',
    '{"docno": "D6", "text": "no line end"}',
]


def test_lines_parse_as_json_loads_parses_them(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes("".join(LINES).encode("utf-8"))
    read = [(d.docno, d.text) for d in iter_documents(str(path))]
    expected = [(r["docno"], r["text"]) for r in map(json.loads, LINES)]
    assert read == expected


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"docno": "D1", "text": "x"} {"docno": "D2"}\n', "invalid JSON: Extra data"),
        ('{"docno": "D1", "text": "x"}\x0c\n', "invalid JSON: Extra data"),
        ('{"docno": "D1", "text": "x\n', "invalid JSON: Invalid control character"),
        ('{"docno": "D1", "text": "x', "invalid JSON: Unterminated string"),
        ("[1, 2]\n", "expected a JSON object"),
    ],
)
def test_a_line_json_loads_refuses_is_refused_with_its_message(tmp_path, line, problem):
    path = tmp_path / "docs.jsonl"
    path.write_text(line, encoding="utf-8")
    with pytest.raises(MatcherError) as caught:
        list(iter_documents(str(path)))
    assert str(caught.value).startswith(f"{path}:1: {problem}")
