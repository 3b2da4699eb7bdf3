"""Every rule, threshold and level is checked in one place: the command, the rule form
and the download links refuse the same values with the same sentence, and no link
carries a refused value."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils.html import escape

from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db

# (command-line options, form fields, the sentence both say)
REFUSED = [
    (["--threshold", "-1"], {"kind": "threshold", "threshold": "-1"},
     "a score threshold is within the min-span scores' range [0, 1], got -1.0"),
    (["--rule", "paper:-1"], {"kind": "threshold", "threshold": "-1"},
     "a score threshold is within the min-span scores' range [0, 1], got -1.0"),
    (["--threshold", "1.7"], {"kind": "threshold", "threshold": "1.7"},
     "a score threshold is within the min-span scores' range [0, 1], got 1.7"),
    (["--rule", "p:1.5"], {"kind": "probability", "threshold": "1.5"},
     "a probability threshold is in [0, 1], got 1.5"),
    (["--top-n", "0"], {"kind": "top_n", "n": "0"},
     "top N needs a whole number N >= 1, got 0"),
]  # fmt: skip


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor)


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=10)


@pytest.mark.parametrize(("options", "fields", "sentence"), REFUSED)
def test_the_command_refuses_a_bad_value_with_one_sentence(
    world, job, tmp_path, options, fields, sentence
):
    out = tmp_path / "inferred.qrels"
    with pytest.raises(CommandError, match=re.escape(sentence)):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind",
            "inferred", "--job", str(job.pk), *options, "-o", str(out),
            stderr=io.StringIO(),
        )  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(("options", "fields", "sentence"), REFUSED)
def test_the_form_refuses_it_and_no_link_carries_it(
    staff_client, job, options, fields, sentence
):
    page = staff_client.get(reverse("job-detail", args=[job.pk]), fields)
    text = page.content.decode()
    assert escape(sentence) in text
    assert "That rule is refused" in text
    downloads = text.split('id="downloads"', 1)[1].split("</ul>", 1)[0]
    links = re.findall(r'href="([^"]+)"', downloads)
    assert links
    for link in links:
        query = link.split("?", 1)[1]
        assert query == "kind=default", link
    # The topic page refuses it too, and says the default rule stands in.
    topic = job.topics.order_by("qid").first()
    topic_page = staff_client.get(
        reverse("job-topic", args=[job.pk, topic.qid]), fields
    )
    assert escape(sentence) in topic_page.content.decode()
    assert 'id="rule-refused"' in topic_page.content.decode()
    # A hand-made download link with the value is refused, never quietly exported
    # under another rule.
    refused = staff_client.get(reverse("job-export", args=[job.pk, "inferred"]), fields)
    assert refused.status_code == 409
    assert escape(sentence) in refused.content.decode()


def test_a_valid_rule_is_shown_and_carried_by_every_link(staff_client, job):
    fields = {"kind": "threshold", "threshold": "0.3", "later": "on"}
    page = staff_client.get(reverse("job-detail", args=[job.pk]), fields)
    text = page.content.decode()
    assert 'value="0.3"' in text
    assert "The downloads use the rule <strong>paper rule: score &gt;= 0.3" in text
    downloads = text.split('id="downloads"', 1)[1].split("</ul>", 1)[0]
    for link in re.findall(r'href="([^"]+)"', downloads):
        assert link.endswith("?kind=threshold&amp;threshold=0.3&amp;later=on"), link
    side = staff_client.get(
        reverse("job-export-provenance", args=[job.pk, "inferred"]), fields
    ).json()
    assert side["rule"]["threshold"] == 0.3
    assert side["kind"] == "inferred"


def test_the_thresholds_file_names_the_line_of_a_value_out_of_range(
    world, job, tmp_path
):
    table = tmp_path / "thresholds.txt"
    table.write_text("1 0.4\n2 1.5\n")
    with pytest.raises(CommandError, match=rf"{table}:2: a score threshold is within"):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind",
            "inferred", "--job", str(job.pk), "--thresholds", str(table),
        )  # fmt: skip


def test_rule_fit_and_fit_option_are_one_spelling(world, job, tmp_path):
    """``--fit f1`` and ``--rule fit:f1`` are the same rule, read by one parser."""
    outputs = []
    for options in (["--fit", "f1"], ["--rule", "fit:f1"]):
        out = tmp_path / f"{options[0].strip('-')}.qrels"
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind",
            "inferred", "--job", str(job.pk), *options, "-o", str(out),
            stderr=io.StringIO(),
        )  # fmt: skip
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
