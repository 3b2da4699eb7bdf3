"""URL patterns of the automatic judges' staff pages: import, audit, and a document
of the audit (included from assessor_ui.urls)."""

from django.urls import path

from assessor_ui.views import judges

urlpatterns = [
    path("collections/<slug:name>/judges/", judges.judges_page, name="staff-judges"),
    path(
        "collections/<slug:name>/judges/audit/",
        judges.judge_audit_page,
        name="staff-judge-audit",
    ),
    path(
        "collections/<slug:name>/judges/<str:judge>/figures/",
        judges.judge_figures_page,
        name="staff-judge-figures",
    ),
    path(
        "collections/<slug:name>/judges/<str:judge>/qrels",
        judges.judge_qrels_download,
        name="staff-judge-qrels",
    ),
    path(
        "collections/<slug:name>/judges/documents/<str:qid>/<path:docno>",
        judges.judge_document,
        name="staff-judge-document",
    ),
]
