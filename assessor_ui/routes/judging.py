"""URL patterns of the judging pages (included from assessor_ui.urls)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
