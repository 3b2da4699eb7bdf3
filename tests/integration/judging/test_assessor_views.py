"""The assessor's home page (progress per assigned topic) and the CSRF refresh."""

import pytest
from django.urls import reverse

from tests import factories as f
from tests.integration.worlds.judging import build_world


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def test_home_shows_progress_and_where_i_stopped(world, assessor_client, assessor):
    # Cranfield's grades 0/1/2: two relevant, one non-relevant, one skipped (seen only).
    for docno, rel, secs in (
        ("184", 2, 30),
        ("29", 1, 20),
        ("31", 0, 10),
        ("12", None, 5),
    ):
        f.JudgmentFactory(
            topic=world.topic, document=world.docs[docno], assessor=assessor,
            relevance=rel, active_seconds=secs,
        )  # fmt: skip
    f.NuggetFactory(topic=world.topic, document=world.docs["184"], assessor=assessor)
    response = assessor_client.get(reverse("assessor-home"))
    html = response.content.decode()
    row = html[html.index("<tbody>") : html.index("</tbody>")]
    cells = [c for c in row.split('<td class="num">')[1:]]
    assert [c.split("<")[0] for c in cells[:5]] == ["3 / 7", "4", "2", "1", "65 s"]
    resume = reverse("judge", args=[world.assignment.pk, world.position("12")])
    assert f'id="resume" href="{resume}"' in html
    # Bob's topic is not listed for Alice.
    assert world.other_topic.title[:40] not in html


def test_home_lists_only_my_topics(world, client, other_assessor):
    client.force_login(other_assessor)
    html = client.get(reverse("assessor-home")).content.decode()
    assert f"{world.other_topic.qid}: " in html
    assert f'href="{reverse("judge-continue", args=[world.assignment.pk])}"' not in html


def test_home_needs_a_login(client):
    response = client.get(reverse("assessor-home"))
    assert response.status_code == 302


def test_an_assessor_lands_on_their_topics(assessor_client):
    response = assessor_client.get(reverse("home"))
    assert response.status_code == 302
    assert response["Location"] == reverse("assessor-home")


def test_a_researcher_lands_on_links_to_every_area(client, other_assessor):
    from django.contrib.auth.models import Group

    from nuggets_app.access import RESEARCHERS_GROUP

    other_assessor.groups.add(Group.objects.create(name=RESEARCHERS_GROUP))
    client.force_login(other_assessor)
    html = client.get(reverse("home")).content.decode()
    for name in ("assessor-home", "job-list", "evaluation-index"):
        assert f'href="{reverse(name)}"' in html
    assert reverse("admin:index") not in html


def test_csrf_refresh_sets_a_cookie_for_a_logged_in_user(assessor_client, client):
    response = assessor_client.get(reverse("csrf-refresh"))
    assert response.status_code == 200
    assert response.cookies["csrftoken"].value
    client.logout()
    assert client.get(reverse("csrf-refresh")).status_code == 401
