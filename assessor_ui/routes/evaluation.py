"""URL patterns of the researcher dashboard (included from assessor_ui.urls)."""

from django.urls import path

from assessor_ui.views import answers, evaluation

urlpatterns = [
    path("evaluation/", evaluation.evaluation_index, name="evaluation-index"),
    path(
        "evaluation/<int:pk>/verification/new",
        evaluation.verification_create,
        name="verification-create",
    ),
    path(
        "evaluation/<int:pk>/answers/",
        answers.evaluation_answers,
        name="evaluation-answers",
    ),
    path(
        "evaluation/<int:pk>/<slug:page>/",
        evaluation.evaluation_page,
        name="evaluation-page",
    ),
    path(
        "evaluation/<int:pk>/<slug:page>/progress",
        evaluation.evaluation_progress,
        name="evaluation-progress",
    ),
    path(
        "evaluation/<int:pk>/<slug:page>/csv/<slug:table>",
        evaluation.evaluation_csv,
        name="evaluation-csv",
    ),
    path(
        "evaluation/<int:pk>/<slug:page>/plot/<slug:plot>.svg",
        evaluation.evaluation_plot,
        name="evaluation-plot",
    ),
]
