"""Docnos by document id: an IN list for a few ids, the collection streamed for many."""

from __future__ import annotations

import pytest

from nuggets_app.collection import selectors
from nuggets_app.models import Collection, Document

pytestmark = pytest.mark.django_db


@pytest.fixture
def documents():
    ours = Collection.objects.create(name="ours")
    other = Collection.objects.create(name="other")
    mine = [Document.objects.create(collection=ours, docno=f"d{i}") for i in range(6)]
    Document.objects.create(collection=other, docno="elsewhere")
    return ours, mine


@pytest.mark.parametrize("in_list_max", [100, 1], ids=["in-list", "streamed"])
def test_docnos_by_id_are_the_same_either_way(documents, monkeypatch, in_list_max):
    monkeypatch.setattr(selectors, "IN_LIST_MAX", in_list_max)
    collection, mine = documents
    wanted = [d.pk for d in mine[1:4]]
    assert selectors.docnos_by_id(collection=collection, ids=wanted) == {
        d.pk: d.docno for d in mine[1:4]
    }
    assert selectors.docnos_by_id(collection=collection, ids=[]) == {}
