"""The staff agreement page and its CSV, on judgments of two assessors."""

import csv
import io

import pytest
from django.urls import reverse

from tests import factories as f
from tests.integration.worlds.judging import build_world


@pytest.fixture
def overlap(shared_data, assessor, other_assessor):
    """Alice and Bob both judge topic 1: the Wikipedia kappa example scaled down."""
    world = build_world(shared_data, assessor, other_assessor)
    f.AssignmentFactory(
        sample=world.assignment.sample, topic=world.topic, assessor=other_assessor
    )
    # (alice, bob) per document: agree on 184, 29, 31, 1; disagree on 12, 51.
    labels = {
        "184": (1, 1),
        "29": (1, 1),
        "31": (0, 0),
        "1": (0, 0),
        "12": (1, 0),
        "51": (0, 1),
    }
    for docno, (a, b) in labels.items():
        f.JudgmentFactory(
            topic=world.topic,
            document=world.docs[docno],
            assessor=assessor,
            relevance=a,
        )
        f.JudgmentFactory(
            topic=world.topic,
            document=world.docs[docno],
            assessor=other_assessor,
            relevance=b,
        )
    doc = world.docs["184"]
    f.NuggetFactory(topic=world.topic, document=doc, assessor=assessor, start=0, end=20)
    f.NuggetFactory(
        topic=world.topic, document=doc, assessor=other_assessor, start=10, end=40
    )
    return world


def test_staff_see_kappa_and_span_overlap(overlap, staff_client):
    response = staff_client.get(reverse("agreement"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "alice / bob" in html
    # p_o = 4/6; both raters 3 yes / 3 no -> p_e = 0.5; kappa = (2/3 - 1/2) / (1/2) = 1/3.
    num = '<td class="num">'
    assert f"{num}0.667</td>{num}0.333</td>{num}0.333</td>" in html
    # Spans [0,20) and [10,40): both 10, union 40 -> Jaccard 0.25, Dice 20/50 = 0.4.
    assert f"{num}1</td>{num}0.250</td>{num}0.400</td>" in html
    # The sample that gives the topic to both is named.
    assert f"<td>{overlap.assignment.sample.name}</td>" in html


def test_the_csv_has_one_row_per_topic_and_pair(overlap, staff_client):
    response = staff_client.get(reverse("agreement"), {"format": "csv"})
    assert response["Content-Disposition"] == 'attachment; filename="agreement.csv"'
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 1
    row = rows[0]
    assert (row["qid"], row["assessor_a"], row["assessor_b"], row["common_docs"]) == (
        "1", "alice", "bob", "6",
    )  # fmt: skip
    assert row["samples"] == overlap.assignment.sample.name
    assert (row["kappa"], row["both_chars"], row["span_jaccard"]) == (
        "0.3333",
        "10",
        "0.2500",
    )


@pytest.mark.parametrize("persona", ["assessor", "other_assessor"])
def test_assessors_cannot_open_the_agreement_page(overlap, client, request, persona):
    client.force_login(request.getfixturevalue(persona))
    assert client.get(reverse("agreement")).status_code == 403
    assert client.get(reverse("agreement"), {"format": "csv"}).status_code == 403


def test_anonymous_users_are_sent_to_login(client):
    response = client.get(reverse("agreement"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
