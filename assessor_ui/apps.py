from django.apps import AppConfig


class AssessorUiConfig(AppConfig):
    name = "assessor_ui"
    verbose_name = "Assessor UI"
    default_auto_field = "django.db.models.BigAutoField"
