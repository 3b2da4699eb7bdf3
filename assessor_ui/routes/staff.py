"""URL patterns of the staff pages: collections, uploads, pools, samples, assignments,
and the tasks that run them (included from assessor_ui.urls)."""

from django.urls import path

from assessor_ui.views import nugget_banks, releases, staff, staff_tasks

urlpatterns = [
    path("collections/", staff.collection_list, name="staff-collections"),
    path("collections/<slug:name>/", staff.collection_detail, name="staff-collection"),
    path(
        "collections/<slug:name>/upload/<slug:kind>/",
        staff_tasks.upload,
        name="staff-upload",
    ),
    path(
        "collections/<slug:name>/nuggets",
        nugget_banks.collection_nuggets,
        name="staff-collection-nuggets",
    ),
    path(
        "collections/<slug:name>/release/",
        releases.collection_release,
        name="staff-collection-release",
    ),
    path("collections/<slug:name>/pools/new/", staff.pool_new, name="staff-pool-new"),
    path("pools/<int:pk>/", staff.pool_detail, name="staff-pool"),
    path("samples/<int:pk>/", staff.sample_detail, name="staff-sample"),
    path(
        "samples/<int:pk>/extend", staff.sample_extend_view, name="staff-sample-extend"
    ),
    path(
        "samples/<int:pk>/nuggets",
        nugget_banks.sample_nuggets,
        name="staff-sample-nuggets",
    ),
    path("samples/<int:pk>/assign", staff.sample_assign, name="staff-sample-assign"),
    path(
        "samples/<int:pk>/nuggets-shared",
        staff.sample_nuggets_shared,
        name="staff-sample-nuggets-shared",
    ),
    path(
        "samples/<int:pk>/next-round",
        staff.sample_round_next,
        name="staff-sample-round-next",
    ),
    path(
        "samples/<int:pk>/reassign",
        staff.sample_reassign,
        name="staff-sample-reassign",
    ),
    path("tasks/", staff_tasks.task_list, name="staff-tasks"),
    path("tasks/<int:pk>/", staff_tasks.task_detail, name="staff-task"),
    path(
        "tasks/<int:pk>/progress", staff_tasks.task_progress, name="staff-task-progress"
    ),
    path("tasks/<int:pk>/confirm", staff_tasks.task_confirm, name="staff-task-confirm"),
    path("tasks/<int:pk>/cancel", staff_tasks.task_cancel, name="staff-task-cancel"),
]
