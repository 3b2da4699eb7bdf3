"""Reads of a collection shaped for exports and estimates."""

from __future__ import annotations

from collections.abc import Collection as Sized

from nuggets_app.models import Collection, Document

# Above this many ids, the collection's docnos are streamed and filtered instead of
# sending the ids as one IN list (a job over a large collection names every document:
# a million parameters in one statement).
IN_LIST_MAX = 20_000


def docnos_by_id(*, collection: Collection, ids: Sized[int]) -> dict[int, str]:
    """``{document id: docno}`` of ``ids`` (documents of ``collection``)."""
    if len(ids) <= IN_LIST_MAX:
        return dict(
            Document.objects.filter(pk__in=list(ids)).values_list("pk", "docno")
        )
    wanted = ids if isinstance(ids, (set, frozenset)) else set(ids)
    rows = (
        Document.objects.filter(collection=collection)
        .order_by()
        .values_list("pk", "docno")
        .iterator(chunk_size=20_000)
    )
    return {pk: docno for pk, docno in rows if pk in wanted}
