from django.apps import AppConfig


class LabConfig(AppConfig):
    """The lab's commands (``simulate``, ``evaluate_matcher``, ``export_ltr``)."""

    name = "lab"
    label = "lab"
    verbose_name = "Lab: experiments on the product"
