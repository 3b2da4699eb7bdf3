"""The persistent stem table: a cache of NLTK's own stems that leaves every output as
it was, shared by processes, and harmless when missing or broken."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from nltk.stem.porter import PorterStemmer

from matcher.stems import StemTable, porter_stemmer_id
from matcher.tokens import TOKEN_RE, default_stopwords

REPO = Path(__file__).resolve().parents[3]
COLLECTIONS = ("cranfield", "medline")

# Run in a fresh process: the table is loaded when a process first stems.
NORMALIZE = """
import gzip, hashlib, json, sys
from matcher import normalize
from matcher.tokens import stems_save
digest = hashlib.sha256()
for path in sys.argv[1:]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            digest.update(" ".join(normalize(json.loads(line)["text"])).encode())
            digest.update(b"\\n")
stems_save()
print(json.dumps({"digest": digest.hexdigest(), "nltk": "nltk" in sys.modules}))
"""


def normalize_in_a_fresh_process(paths, table) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", NORMALIZE, *map(str, paths)],
        cwd=REPO,
        env={"MATCHER_STEM_TABLE": str(table), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def vocabulary(paths) -> set[str]:
    words = set()
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                words.update(TOKEN_RE.findall(json.loads(line)["text"].casefold()))
    return words - default_stopwords()


@pytest.fixture
def docs(shared_data):
    return [shared_data / name / "docs.jsonl.gz" for name in COLLECTIONS]


def test_the_table_holds_nltks_stems_for_a_real_vocabulary_and_outputs_stay_the_same(
    docs, tmp_path
):
    table = tmp_path / "stems.sqlite3"
    without = normalize_in_a_fresh_process(docs, "off")
    filling = normalize_in_a_fresh_process(docs, table)
    filled = normalize_in_a_fresh_process(docs, table)

    stored = StemTable(table, porter_stemmer_id()).load()
    words = vocabulary(docs)
    assert len(words) > 15_000
    assert set(stored) == words
    stemmer = PorterStemmer()  # default mode: NLTK_EXTENSIONS
    assert [w for w in words if stored[w] != (stemmer.stem(w) or w)] == []
    assert without["digest"] == filling["digest"] == filled["digest"]
    # Every term was in the table: the second process never imported NLTK.
    assert filling["nltk"]
    assert not filled["nltk"]


def test_a_table_of_another_nltk_version_is_not_used(tmp_path):
    path = tmp_path / "stems.sqlite3"
    other = StemTable(path, "nltk-0.0/porter/NLTK_EXTENSIONS")
    other.add("running", "WRONG")
    other.save()
    assert StemTable(path, porter_stemmer_id()).load() == {}
    assert other.load() == {"running": "WRONG"}


def test_an_unusable_table_falls_back_to_stemming_in_memory(docs, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    broken = normalize_in_a_fresh_process(docs[:1], blocker / "stems.sqlite3")
    assert broken == normalize_in_a_fresh_process(docs[:1], "off")
    table = StemTable(blocker / "stems.sqlite3", porter_stemmer_id())
    table.add("running", "run")
    table.save()
    assert table.load() == {}


def test_writers_add_without_replacing(tmp_path):
    path = tmp_path / "stems.sqlite3"
    first, second = (StemTable(path, porter_stemmer_id()) for _ in range(2))
    first.add("nations", "nation")
    second.add("nations", "nation")
    second.add("ran", "ran")
    first.save()
    second.save()
    assert StemTable(path, porter_stemmer_id()).load() == {
        "nations": "nation",
        "ran": "ran",
    }


def test_the_nltk_version_is_the_installed_distributions():
    import importlib.metadata

    import nltk

    from matcher.stems import nltk_version

    assert nltk_version() == importlib.metadata.version("nltk") == nltk.__version__
