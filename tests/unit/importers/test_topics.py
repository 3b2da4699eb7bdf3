"""Topic files: TREC, XML (with subtopics) and JSONL."""

import pytest

from nuggets_app.importers import ImportFormatError, parse_topics


@pytest.mark.parametrize(
    ("name", "count"), [("cranfield", 225), ("npl-vaswani", 93), ("cisi", 112)]
)
def test_trec_and_jsonl_topics_agree(shared_data, name, count):
    trec = list(parse_topics(shared_data / name / "topics.trec"))
    jsonl = list(parse_topics(shared_data / name / "topics.jsonl"))
    assert len(trec) == len(jsonl) == count
    assert [t[1:] for t in trec] == [t[1:] for t in jsonl]


def test_cranfield_first_topic_has_its_prefixes_stripped(shared_data):
    first = next(parse_topics(shared_data / "cranfield" / "topics.trec"))
    assert first.qid == "1"
    assert first.title.startswith("what similarity laws must be obeyed")
    assert first.description == first.title
    assert first.narrative == ""


def test_web09_xml_topics_carry_their_subtopics(shared_data):
    topics = list(
        parse_topics(shared_data / "trec-web09-prels" / "topics.web.1-50.xml")
    )
    assert [t.qid for t in topics] == [str(i) for i in range(1, 51)]
    first = topics[0]
    assert first.title == "obama family tree"
    assert first.description.startswith("Find information on President Barack Obama")
    assert [a["id"] for a in first.aspects] == ["1", "2", "3"]
    assert first.aspects[0]["type"] == "nav"
    assert all(3 <= len(t.aspects) <= 8 for t in topics)


def test_jsonl_aspects_as_strings_or_objects(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"qid": 7, "title": "a", "aspects": ["x", {"id": "b", "text": " y  z "}]}\n'
    )
    (topic,) = parse_topics(path)
    assert topic.qid == "7"
    assert topic.aspects == [{"id": "1", "text": "x"}, {"id": "b", "text": "y z"}]


def test_trec_topics_with_closing_tags_and_other_fields(tmp_path):
    path = tmp_path / "t.trec"
    path.write_text(
        "<top>\n<num> Number: 301 </num>\n<title> Topic: foreign crime </title>\n"
        "<desc> Description:\nWhat is it?\n</desc>\n<con> Concepts: x </con>\n"
        "<narr> Narrative:\nRelevant if\nso.\n</narr>\n</top>\n"
    )
    (topic,) = parse_topics(path)
    assert topic[1:5] == ("301", "foreign crime", "What is it?", "Relevant if so.")


def test_a_bad_jsonl_aspect_names_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"qid": "1", "title": "a"}\n{"qid": "2", "title": "b", "aspects": [3]}\n'
    )
    with pytest.raises(ImportFormatError, match=r":2: aspect 1"):
        list(parse_topics(path))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"qid": "2", "description": "d"}', r'\.jsonl:2: missing field "title"\Z'),
        ('{"title": "b"}', r'\.jsonl:2: missing field "qid"\Z'),
        ('{"qid": "2", "title": ""}', r'\.jsonl:2: empty field "title"\Z'),
    ],
)
def test_a_jsonl_topic_without_its_field_is_told_in_jsonl_terms(
    tmp_path, line, message
):
    path = tmp_path / "t.jsonl"
    path.write_text('{"qid": "1", "title": "a"}\n' + line + "\n")
    with pytest.raises(ImportFormatError, match=message):
        list(parse_topics(path))


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"qid": "1", "title": 7}', 'field "title" has the wrong type (expected a '
         "string, got 'number')"),
        ('{"qid": "1", "title": "t", "aspects": {}}', 'field "aspects" is not an '
         "array (got 'object')"),
    ],
)  # fmt: skip
def test_a_wrong_json_type_is_named_as_json_names_it(tmp_path, line, problem):
    path = tmp_path / "topics.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ImportFormatError) as error:
        list(parse_topics(path))
    assert str(error.value) == f"{path}:1: {problem}"
