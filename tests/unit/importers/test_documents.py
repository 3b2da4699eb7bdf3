"""Collections: TREC SGML, JSONL and directories, on the real shared collections."""

import json

import pytest

from nuggets_app.importers import DocRecord, ImportFormatError, parse_collection
from nuggets_app.importers.textio import ReadStats

COLLECTIONS = {
    "cranfield": 1400,
    "npl-vaswani": 11429,
    "adi": 82,
    "cacm": 3204,
    "cisi": 1460,
    "medline": 1033,
    "lisa": 5999,
}


@pytest.mark.parametrize("name", ["cranfield", "adi", "medline"])
def test_trec_and_jsonl_copies_give_the_same_documents(shared_data, name):
    folder = shared_data / name
    trec = list(parse_collection(folder / "docs.trec.gz"))
    jsonl = list(parse_collection(folder / "docs.jsonl.gz"))
    stats = json.loads((folder / "stats.json").read_text())
    assert len(trec) == len(jsonl) == stats["docs"] == COLLECTIONS[name]
    assert [(d.docno, d.title, d.text) for d in trec] == [
        (d.docno, d.title, d.text) for d in jsonl
    ]
    assert sum(1 for d in trec if not d.text) == stats["empty_text_docs"]


def test_cranfield_word_counts_match_stats_json(shared_data):
    folder = shared_data / "cranfield"
    stats = json.loads((folder / "stats.json").read_text())
    docs = list(parse_collection(folder / "docs.trec.gz"))
    text_only = [len(d.text.split()) for d in docs]
    with_title = [len((d.title + " " + d.text).split()) for d in docs]
    assert round(sum(text_only) / len(docs), 1) == stats["doc_words_mean_text_only"]
    assert (
        round(sum(with_title) / len(docs), 1) == stats["doc_words_mean_title_plus_text"]
    )
    assert max(with_title) == stats["doc_words_max"]


def test_sgml_fields_entities_and_inner_tags(tmp_path):
    path = tmp_path / "c.trec"
    path.write_bytes(
        b"<DOC>\r\n<DOCNO> FT1-1 </DOCNO>\r\n<DOCHDR>ignored</DOCHDR>\r\n"
        b"<HEADLINE>\r\nA &amp; B\r\n</HEADLINE>\r\n<TEXT>\r\n<P>one &lt;x&gt;</P>\r\n"
        b"<P>two</P>\r\n</TEXT>\r\n<TEXT>more</TEXT>\r\n</DOC>\r\n"
    )
    (doc,) = parse_collection(path)
    assert doc == DocRecord(1, "FT1-1", "A & B", "one <x>\ntwo\n\nmore", "")


def test_doc_id_attribute_stands_in_for_docno(tmp_path):
    path = tmp_path / "aquaint.sgml"
    path.write_text('<DOC id="APW_1" type="story">\n<TEXT>hello</TEXT>\n</DOC>\n')
    assert [d.docno for d in parse_collection(path)] == ["APW_1"]


def test_trecweb_html_is_converted_and_kept_sanitized(tmp_path):
    path = tmp_path / "web.trec"
    path.write_text(
        "<DOC>\n<DOCNO>w1</DOCNO>\n<DOCHDR>http://x</DOCHDR>\n<html><head><title>T</title>"
        "<script>evil()</script></head><body><p>Hello <b>world</b></p></body></html>\n</DOC>\n"
    )
    (doc,) = parse_collection(path)
    assert (doc.title, doc.text) == ("T", "Hello world")
    assert "script" not in doc.html
    assert "<b>world</b>" in doc.html


def test_jsonl_html_documents(tmp_path):
    path = tmp_path / "h.jsonl"
    html = "<h1>Head</h1><p>Body &amp; more</p><img src='http://t/x.png'>"
    path.write_text(json.dumps({"docno": "h1", "html": html}) + "\n")
    (doc,) = parse_collection(path)
    assert doc.text == "Head\n\nBody & more"
    assert doc.html == "<h1>Head</h1><p>Body &amp; more</p>"


def test_jsonl_text_keeps_its_characters_but_not_cr(tmp_path):
    path = tmp_path / "t.jsonl"
    text = "a\r\nb\rc \U0001f600  d\u00a0e"
    path.write_text("\ufeff" + json.dumps({"docno": "x", "text": text}) + "\n")
    (doc,) = parse_collection(path)
    assert doc.text == "a\nb\nc \U0001f600  d\u00a0e"


def test_directory_of_text_and_html_files(tmp_path):
    (tmp_path / "b.txt").write_text("plain\r\ntext\n")
    (tmp_path / "a.html").write_text("<title>Page</title><p>x</p>")
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    docs = list(parse_collection(tmp_path))
    assert [(d.docno, d.title, d.text) for d in docs] == [
        ("a", "Page", "x"),
        ("b", "", "plain\ntext"),
    ]


def test_a_jsonl_document_without_docno_names_the_field_without_python_reprs(
    tmp_path,
):
    path = tmp_path / "d.jsonl"
    path.write_text('{"docno": "D1", "text": "a"}\n{"title": "t", "text": "b"}\n')
    with pytest.raises(ImportFormatError) as caught:
        list(parse_collection(path))
    assert str(caught.value).endswith('d.jsonl:2: missing field "docno"')
    assert "dict_keys" not in str(caught.value)


def test_a_directory_counts_the_bytes_it_read(tmp_path):
    (tmp_path / "a.txt").write_text("one two")
    (tmp_path / "b.txt").write_text("three")
    stats = ReadStats()
    assert len(list(parse_collection(tmp_path, stats=stats))) == 2
    assert stats.bytes == len("one two") + len("three")
