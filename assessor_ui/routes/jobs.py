"""URL patterns of the jobs pages (included from assessor_ui.urls)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
