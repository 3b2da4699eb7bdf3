"""URL patterns of the researcher pages: matching jobs, inspection, exports."""

from django.urls import path

from assessor_ui.views import job_nuggets, jobs, new_runs

urlpatterns = [
    path("jobs/", jobs.job_list, name="job-list"),
    path("jobs/new/", jobs.job_launch, name="job-launch"),
    path("jobs/<int:pk>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:pk>/progress", jobs.job_progress, name="job-progress"),
    path("jobs/<int:pk>/cancel", jobs.job_cancel, name="job-cancel"),
    path("jobs/<int:pk>/resume", jobs.job_resume, name="job-resume"),
    path("jobs/<int:pk>/rescore", jobs.job_rescore, name="job-rescore"),
    path("jobs/<int:pk>/fit", jobs.job_fit, name="job-fit"),
    path(
        "jobs/<int:pk>/nugget-value",
        job_nuggets.job_nugget_value,
        name="job-nugget-value",
    ),
    path(
        "jobs/<int:pk>/nugget-value/progress",
        job_nuggets.job_nugget_value_progress,
        name="job-nugget-value-progress",
    ),
    # A topic by its qid, as a researcher would type it.
    path("jobs/<int:pk>/qid/<str:qid>/", jobs.job_topic, name="job-topic"),
    path(
        "jobs/<int:pk>/qid/<str:qid>/documents/<int:doc_pk>/",
        jobs.job_document,
        name="job-document",
    ),
    path("jobs/<int:pk>/export/<slug:kind>", jobs.job_export, name="job-export"),
    path(
        "jobs/<int:pk>/export/<slug:kind>/provenance",
        jobs.job_export,
        {"part": "provenance"},
        name="job-export-provenance",
    ),
    path("jobs/<int:pk>/new-run/", new_runs.job_new_run, name="job-new-run"),
    path(
        "jobs/<int:pk>/new-documents",
        new_runs.job_new_documents,
        name="job-new-documents",
    ),
    path(
        "jobs/<int:pk>/new-runs/<int:run>/",
        new_runs.job_new_run_kept,
        name="job-new-run-kept",
    ),
    path(
        "jobs/<int:pk>/new-runs/<int:run>/top-up",
        new_runs.job_new_run_top_up,
        name="job-new-run-top-up",
    ),
]
