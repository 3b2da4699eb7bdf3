"""A small judging world in the database of ``DATABASE_URL``, for tests that serve it
from a server of their own: migrated, one assessor with a live session, one topic of
``DOCUMENTS`` queued documents. Run as ``python -m`` it prints the world as JSON."""

from __future__ import annotations

import json
import os

DOCUMENTS = 8


def build() -> dict:
    """Migrate and create the world; the assignment, positions and session key."""
    from django.core.management import call_command
    from django.test import Client

    from tests import factories as f

    call_command("migrate", verbosity=0)
    assessor = f.UserFactory(username="alice")
    collection = f.CollectionFactory(name="away")
    topic = f.TopicFactory(collection=collection, qid="1")
    sample = f.SampleFactory(pool=f.PoolFactory(collection=collection))
    for i in range(DOCUMENTS):
        doc = f.DocumentFactory(collection=collection, docno=f"away-{i}")
        f.SampleDocumentFactory(sample=sample, topic=topic, document=doc, order=i + 1)
    assignment = f.AssignmentFactory(sample=sample, topic=topic, assessor=assessor)
    client = Client()
    client.force_login(assessor)
    return {
        "assignment": assignment.pk,
        "positions": list(range(1, DOCUMENTS + 1)),
        "session": client.cookies["sessionid"].value,
    }


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    print(json.dumps(build()))
