"""factory_boy factories for the domain models."""

import factory
from django.contrib.auth import get_user_model

from nuggets_app import models as m


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("judge-all-day-42")


class CollectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Collection

    name = factory.Sequence(lambda n: f"collection-{n}")


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Document

    collection = factory.SubFactory(CollectionFactory)
    docno = factory.Sequence(lambda n: f"D{n:05d}")
    title = "A document"
    text = "John Kennedy was elected president in 1960."
    length_words = factory.LazyAttribute(lambda d: len(d.text.split()))
    length_chars = factory.LazyAttribute(lambda d: len(d.text))


class TopicFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Topic

    collection = factory.SubFactory(CollectionFactory)
    qid = factory.Sequence(lambda n: str(n + 1))
    title = "presidential elections"
    description = "Find documents about US presidential elections."


class RunFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Run

    collection = factory.SubFactory(CollectionFactory)
    name = factory.Sequence(lambda n: f"run{n}")


class PoolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Pool

    collection = factory.SubFactory(CollectionFactory)
    name = factory.Sequence(lambda n: f"pool{n}")
    depth = 10


class SampleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Sample

    pool = factory.SubFactory(PoolFactory)
    name = factory.Sequence(lambda n: f"sample{n}")
    method = m.Sample.Method.STATAP
    size = 5
    seed = 1


class SampleDocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.SampleDocument

    sample = factory.SubFactory(SampleFactory)
    topic = factory.SubFactory(TopicFactory)
    document = factory.SubFactory(DocumentFactory)
    inclusion_prob = 0.5
    order = factory.Sequence(lambda n: n + 1)


class AssignmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Assignment

    sample = factory.SubFactory(SampleFactory)
    topic = factory.SubFactory(TopicFactory)
    assessor = factory.SubFactory(UserFactory)


class JudgmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Judgment

    topic = factory.SubFactory(TopicFactory)
    document = factory.SubFactory(DocumentFactory)
    assessor = factory.SubFactory(UserFactory)
    relevance = 1


class NuggetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Nugget

    topic = factory.SubFactory(TopicFactory)
    assessor = factory.SubFactory(UserFactory)
    document = factory.SubFactory(DocumentFactory)
    start = 0
    end = 12
    span_text = factory.LazyAttribute(lambda n: n.document.text[n.start : n.end])
    text = factory.LazyAttribute(lambda n: n.span_text)
