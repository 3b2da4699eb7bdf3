"""URL patterns of the judging pages (included from assessor_ui.urls)."""

from django.urls import path

from assessor_ui.views import agreement, assessor, history, judge, nuggets

urlpatterns = [
    path("assess/", assessor.assessor_home, name="assessor-home"),
    path("assess/csrf", assessor.csrf_refresh, name="csrf-refresh"),
    path("assess/preferences", judge.preferences_update, name="judge-preferences"),
    path("assess/<int:assignment_id>/", judge.judge_continue, name="judge-continue"),
    path("assess/<int:assignment_id>/<int:position>/", judge.judge, name="judge"),
    path(
        "assess/<int:assignment_id>/<int:position>/data",
        judge.judge_data,
        name="judge-data",
    ),
    path(
        "assess/<int:assignment_id>/<int:position>/judgment",
        judge.judgment_save,
        name="judgment-save",
    ),
    path(
        "assess/<int:assignment_id>/<int:position>/time",
        judge.time_save,
        name="time-save",
    ),
    path(
        "assess/<int:assignment_id>/<int:position>/history",
        history.work_history,
        name="work-history",
    ),
    path(
        "assess/<int:assignment_id>/<int:position>/undo",
        history.work_undo,
        name="work-undo",
    ),
    path(
        "assess/<int:assignment_id>/<int:position>/nuggets",
        nuggets.nugget_create,
        name="nugget-create",
    ),
    path(
        "assess/<int:assignment_id>/preview",
        nuggets.nugget_preview_counts,
        name="nugget-preview",
    ),
    path(
        "assess/<int:assignment_id>/aspects",
        nuggets.topic_aspect_create,
        name="aspect-create",
    ),
    path("nuggets/<int:pk>/edit", nuggets.nugget_edit, name="nugget-edit"),
    path("nuggets/<int:pk>/delete", nuggets.nugget_remove, name="nugget-delete"),
    path("agreement/", agreement.agreement, name="agreement"),
]
