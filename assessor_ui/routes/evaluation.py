"""URL patterns of the evaluation pages (included from assessor_ui.urls)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
