from django.apps import AppConfig


class NuggetsAppConfig(AppConfig):
    name = "nuggets_app"
    verbose_name = "Nugget assessment"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Bind @shared_task to the project's Celery app in every process Django runs in.
        from . import celery  # noqa: F401
