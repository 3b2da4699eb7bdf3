"""Setting a collection's aggregation rule: how several assessors' grades of one
document become its human label (:mod:`nuggets_app.judging.selectors.labels` reads
them under it)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from nuggets_app.ir.aggregation import Aggregation, AggregationError
from nuggets_app.models import Collection


def aggregation_set(*, collection: Collection, aggregation: Aggregation) -> None:
    """Make ``aggregation`` the collection's rule (``AggregationError`` when the
    primary assessor is not a user)."""
    if aggregation.primary is not None:
        users = get_user_model().objects
        if not users.filter(username=aggregation.primary).exists():
            raise AggregationError(f"no user {aggregation.primary!r} to be primary")
    stored = {k: v for k, v in aggregation.as_dict().items() if k != "text"}
    with transaction.atomic():
        Collection.objects.filter(pk=collection.pk).update(aggregation=stored)
    collection.aggregation = stored
