"""URL patterns of the staff pages that resolve and check several assessors' work:
adjudication, guidelines, known answers and assessor quality, the workload (included
from assessor_ui.urls)."""

from django.urls import path

from assessor_ui.views import adjudication, quality

urlpatterns = [
    path(
        "collections/<slug:name>/aggregation",
        quality.aggregation_update,
        name="staff-aggregation",
    ),
    path(
        "collections/<slug:name>/adjudicate/",
        adjudication.adjudication_queue,
        name="staff-adjudication",
    ),
    path(
        "collections/<slug:name>/adjudicate/document",
        adjudication.adjudication_item,
        name="staff-adjudication-item",
    ),
    path(
        "collections/<slug:name>/adjudicate/save",
        adjudication.adjudication_save,
        name="staff-adjudication-save",
    ),
    path(
        "collections/<slug:name>/guidelines/",
        quality.guidelines,
        name="staff-guidelines",
    ),
    path(
        "collections/<slug:name>/assessors/",
        quality.assessor_quality_page,
        name="staff-assessor-quality",
    ),
    path(
        "collections/<slug:name>/known-answers",
        quality.known_answers_create,
        name="staff-known-answers",
    ),
    path(
        "collections/<slug:name>/known-answers/interleave",
        quality.known_answers_place,
        name="staff-known-answers-interleave",
    ),
    path("workload/", quality.workload_page, name="staff-workload"),
]
