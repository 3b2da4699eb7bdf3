"""Nugget-based relevance assessment: the Django project and its core domain.

The Celery app is loaded by ``NuggetsAppConfig.ready`` rather than here, so that the
Django-free modules under ``nuggets_app.ir`` can be imported without Celery or Django.
"""
