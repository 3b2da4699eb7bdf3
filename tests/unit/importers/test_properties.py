"""Round-trip and mutation properties of the parsers (Hypothesis).

Round trip: valid records written in the file format parse back equal. Mutation: a
valid file with one line deleted, duplicated or swapped, random bytes inserted, a cut,
or a separator replaced either parses or fails with ImportFormatError near the change,
never with another exception type.
"""

import contextlib
import html
import json
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.importers import (
    ImportFormatError,
    QrelsLine,
    parse_collection,
    parse_qrels,
    parse_run,
    parse_topics,
    rank_by_score,
)

SAFE_ID = st.text(
    alphabet=string.ascii_letters + string.digits + "-_.:/", min_size=1, max_size=12
)
SCORE = st.floats(allow_nan=False, allow_infinity=False, width=64)
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=60,
)
SEP = st.sampled_from([" ", "\t", "  ", " \t"])


def _write(tmp_path_factory, name, data: bytes):
    path = tmp_path_factory.mktemp("p") / name
    path.write_bytes(data)
    return path


@st.composite
def runs(draw):
    pairs = draw(
        st.lists(st.tuples(SAFE_ID, SAFE_ID), min_size=1, max_size=30, unique=True)
    )
    tag = draw(SAFE_ID)
    return [(qid, docno, draw(SCORE), tag) for qid, docno in pairs]


@given(runs(), SEP, st.booleans())
@settings(max_examples=500)
def test_runs_round_trip_and_rank_like_trec_eval(tmp_path_factory, run, sep, crlf):
    end = "\r\n" if crlf else "\n"
    body = "".join(
        sep.join([q, "Q0", d, str(i), repr(s), t]) + end
        for i, (q, d, s, t) in enumerate(run)
    )
    lines = list(parse_run(_write(tmp_path_factory, "r.run", body.encode())))
    assert [(r.qid, r.docno, r.score, r.tag) for r in lines] == run
    ranked = rank_by_score(lines)
    for qid in {q for q, *_ in run}:
        mine = [r for r in ranked if r.qid == qid]
        expected = sorted(mine, key=lambda r: (-r.score, [-ord(c) for c in r.docno]))
        assert [r.docno for r in mine] == [r.docno for r in expected]
        assert [r.rank for r in mine] == list(range(1, len(mine) + 1))


@st.composite
def judgments(draw):
    pairs = draw(
        st.lists(st.tuples(SAFE_ID, SAFE_ID), min_size=1, max_size=30, unique=True)
    )
    prels = draw(st.booleans())
    rows = []
    for i, (qid, docno) in enumerate(pairs, start=1):
        rel = draw(st.integers(-5, 5))
        if prels:
            method = draw(st.none() | st.integers(0, 3))
            prob = draw(st.none() | st.floats(min_value=1e-9, max_value=1.0))
            rows.append(QrelsLine(i, qid, docno, rel, method, prob))
        else:
            rows.append(QrelsLine(i, qid, docno, rel, None, None))
    return prels, rows


def _na(value):
    return (
        "NA"
        if value is None
        else repr(value)
        if isinstance(value, float)
        else str(value)
    )


@given(judgments(), SEP)
@settings(max_examples=500)
def test_qrels_and_prels_round_trip(tmp_path_factory, case, sep):
    prels, rows = case
    if prels:
        text = "".join(
            sep.join([r.qid, r.docno, str(r.rel), _na(r.method), _na(r.inclusion_prob)])
            + "\n"
            for r in rows
        )
    else:
        text = "".join(sep.join([r.qid, "0", r.docno, str(r.rel)]) + "\n" for r in rows)
    assert list(parse_qrels(_write(tmp_path_factory, "q.txt", text.encode()))) == rows


def _canonical(text):
    return text.replace("\r\n", "\n").replace("\r", "\n")


@st.composite
def documents(draw):
    docnos = draw(st.lists(SAFE_ID, min_size=1, max_size=8, unique=True))
    return [(d, draw(TEXT), draw(TEXT)) for d in docnos]


@given(documents())
@settings(max_examples=500)
def test_sgml_documents_round_trip(tmp_path_factory, docs):
    body = "".join(
        f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TITLE>{html.escape(t, quote=False)}</TITLE>\n"
        f"<TEXT>\n{html.escape(x, quote=False)}\n</TEXT>\n</DOC>\n"
        for d, t, x in docs
    )
    parsed = list(parse_collection(_write(tmp_path_factory, "c.trec", body.encode())))
    assert [(p.docno, p.title, p.text) for p in parsed] == [
        (d, _canonical(t).strip(" \t\n"), _canonical(x).strip(" \t\n"))
        for d, t, x in docs
    ]


@given(documents())
@settings(max_examples=500)
def test_jsonl_documents_round_trip_keeping_every_character(tmp_path_factory, docs):
    body = "".join(
        json.dumps({"docno": d, "title": t, "text": x}) + "\n" for d, t, x in docs
    )
    parsed = list(parse_collection(_write(tmp_path_factory, "c.jsonl", body.encode())))
    assert [(p.docno, p.text) for p in parsed] == [
        (d, _canonical(x)) for d, _, x in docs
    ]


@given(
    st.lists(
        st.tuples(SAFE_ID, TEXT.filter(lambda t: t.split())),
        min_size=1,
        max_size=8,
        unique_by=lambda t: t[0],
    )
)
@settings(max_examples=500)
def test_jsonl_topics_round_trip(tmp_path_factory, topics):
    body = "".join(json.dumps({"qid": q, "title": t}) + "\n" for q, t in topics)
    parsed = list(parse_topics(_write(tmp_path_factory, "t.jsonl", body.encode())))
    assert [(p.qid, p.title) for p in parsed] == [
        (q, " ".join(t.split())) for q, t in topics
    ]


VALID = {
    "run": (
        parse_run,
        b"1 Q0 d1 1 3.5 t\n1 Q0 d2 2 2.5 t\n2 Q0 d1 1 1.5 t\n2 Q0 d3 2 0.5 t\n",
    ),
    "qrels": (parse_qrels, b"1 0 d1 1\n1 0 d2 0\n2 0 d1 2\n2 0 d3 0\n"),
    "prels": (parse_qrels, b"1 d1 1 0 1\n1 d2 0 1 0.5\n2 d1 1 1 0.25\n2 d3 0 1 NA\n"),
}


@st.composite
def mutations(draw, data: bytes):
    lines = data.split(b"\n")[:-1]
    kind = draw(
        st.sampled_from(["delete", "duplicate", "swap", "bytes", "cut", "nbsp", "tab"])
    )
    i = draw(st.integers(0, len(lines) - 1))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
        i += 1
    elif kind == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "bytes":
        at = draw(st.integers(0, len(lines[i])))
        lines[i] = (
            lines[i][:at] + draw(st.binary(min_size=1, max_size=6)) + lines[i][at:]
        )
    elif kind == "cut":
        at = draw(st.integers(0, len(lines[i])))
        lines = [*lines[:i], lines[i][:at]]
        return b"\n".join(lines), i + 1
    else:
        lines[i] = lines[i].replace(
            b" ", "\u00a0".encode() if kind == "nbsp" else b"\t", 1
        )
    return b"\n".join(lines) + b"\n", i + 1


def _check_mutation(tmp_path_factory, name, data):
    parser, _ = VALID[name]
    mutated, line = data
    path = _write(tmp_path_factory, "m.txt", mutated)
    error = None
    try:
        list(parser(path))
    except ImportFormatError as caught:
        error = caught
    if error is not None:
        # A line that gained a '\n' (inserted bytes) shifts what follows by one or more.
        original = VALID[name][1].count(b"\n")
        extra = max(0, mutated.count(b"\n") - original)
        assert line - 1 <= error.line <= line + extra + 1, (error, line)


@given(mutations(VALID["run"][1]))
@settings(max_examples=300)
def test_a_mutated_run_parses_or_fails_with_a_line_near_the_change(
    tmp_path_factory, data
):
    _check_mutation(tmp_path_factory, "run", data)


@given(mutations(VALID["qrels"][1]))
@settings(max_examples=300)
def test_a_mutated_qrels_parses_or_fails_near_the_change(tmp_path_factory, data):
    _check_mutation(tmp_path_factory, "qrels", data)


@given(mutations(VALID["prels"][1]))
@settings(max_examples=300)
def test_a_mutated_prels_parses_or_fails_near_the_change(tmp_path_factory, data):
    _check_mutation(tmp_path_factory, "prels", data)


SGML = (
    b"<DOC>\n<DOCNO>d1</DOCNO>\n<TITLE>a</TITLE>\n<TEXT>\none\n</TEXT>\n</DOC>\n"
    b"<DOC>\n<DOCNO>d2</DOCNO>\n<TEXT>\ntwo &amp; three\n</TEXT>\n</DOC>\n"
)
JSONL = (
    b'{"docno": "d1", "text": "one"}\n{"docno": "d2", "title": "t", "text": "two"}\n'
)
TOPICS = b"<top>\n<num> Number: 1\n<title> one\n</top>\n<top>\n<num> Number: 2\n<title> two\n</top>\n"


@given(st.sampled_from([SGML, JSONL, TOPICS]).flatmap(mutations))
@settings(max_examples=300)
def test_mutated_documents_and_topics_never_raise_another_exception(
    tmp_path_factory, data
):
    mutated, _ = data
    path = _write(tmp_path_factory, "m.txt", mutated)
    parser = (
        parse_topics
        if b"<top>" in mutated or b"Number" in mutated
        else parse_collection
    )
    with contextlib.suppress(ImportFormatError):
        list(parser(path))
