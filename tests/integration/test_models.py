import pytest
from django.db import IntegrityError

from tests.factories import DocumentFactory, JudgmentFactory, NuggetFactory

pytestmark = pytest.mark.django_db


def test_docno_is_unique_within_a_collection():
    doc = DocumentFactory(docno="X1")
    DocumentFactory(docno="X1")  # another collection: fine
    with pytest.raises(IntegrityError):
        DocumentFactory(docno="X1", collection=doc.collection)


def test_one_judgment_per_topic_document_and_assessor():
    j = JudgmentFactory()
    with pytest.raises(IntegrityError):
        JudgmentFactory(topic=j.topic, document=j.document, assessor=j.assessor)


def test_a_nugget_span_cannot_be_empty():
    with pytest.raises(IntegrityError):
        NuggetFactory(start=5, end=5)
