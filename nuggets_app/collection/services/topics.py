"""Finding a collection's topics by qid, with one refusal wording for every caller
(the launch form, ``manage.py match``, ``export_qrels``, ``assign``)."""

from __future__ import annotations

from collections.abc import Iterable

from nuggets_app.errors import DomainError
from nuggets_app.models import Collection, Topic


class UnknownTopics(DomainError):
    """Some qids name no topic of the collection (``missing`` lists them)."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(f"unknown topics: {', '.join(missing)}")
        self.missing = missing


def topics_find(*, collection: Collection, qids: Iterable[str]) -> list[Topic]:
    """The topics of ``collection`` named by ``qids`` in that order, each once; all
    its topics (by qid) when ``qids`` is empty. Any unknown qid refuses the lot."""
    wanted = list(dict.fromkeys(q for q in qids if q))
    topics = Topic.objects.filter(collection=collection)
    if not wanted:
        return sorted(topics, key=lambda t: t.qid)
    by_qid = {t.qid: t for t in topics.filter(qid__in=wanted)}
    missing = [q for q in wanted if q not in by_qid]
    if missing:
        raise UnknownTopics(missing)
    return [by_qid[q] for q in wanted]
