"""Input validation for the judging pages (form-encoded POST bodies and GET queries).

Bodies are form-encoded so that ``navigator.sendBeacon`` can carry them (with the CSRF
token as ``csrfmiddlewaretoken``) when a tab is closed.
"""

from __future__ import annotations

import json
from typing import cast

from django import forms

from nuggets_app.judging.services.judgments import MAX_ACTIVE_SECONDS_DELTA


class KeywordsField(forms.CharField):
    """A JSON list of strings (``["mach", "wing"]``), or comma-separated words."""

    def __init__(self, **kwargs) -> None:
        super().__init__(required=False, strip=True, max_length=4000, **kwargs)

    def clean(self, value: str | None) -> list[str]:
        raw = super().clean(value)
        if not raw:
            return []
        if raw.startswith("["):
            try:
                words = json.loads(raw)
            except ValueError:
                raise forms.ValidationError("keywords: not a JSON list") from None
            if not isinstance(words, list) or not all(
                isinstance(w, str) for w in words
            ):
                raise forms.ValidationError("keywords: must be a list of strings")
            return words
        return [w for w in raw.split(",") if w.strip()]


class SecondsField(forms.FloatField):
    """Active seconds since the last report (idle-aware, measured by the page)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(
            required=False, min_value=0, max_value=MAX_ACTIVE_SECONDS_DELTA, **kwargs
        )

    def clean(self, value: str | None) -> float:
        return super().clean(value) or 0.0


class JudgmentForm(forms.Form):
    """A relevance grade; empty means "skipped"."""

    relevance = forms.IntegerField(required=False, min_value=-10, max_value=100)
    seconds = SecondsField()
    # The judgment's version the page last saw (absent: no check, the grade is set).
    version = forms.IntegerField(required=False, min_value=0)
    # The page's id of this save: a retry of it is stored once.
    client_uuid = forms.UUIDField(required=False)


class TimeForm(forms.Form):
    seconds = SecondsField()


class PreferencesForm(forms.Form):
    """The judging page's preferences (an unchecked box is sent as absent)."""

    advance_on_grade = forms.BooleanField(required=False)


class NuggetFieldsForm(forms.Form):
    """The editable fields of a nugget."""

    text = forms.CharField(max_length=5000, strip=True)
    keywords = KeywordsField()
    grade = forms.IntegerField(required=False, min_value=-10, max_value=100)
    aspect = forms.CharField(required=False, max_length=200, strip=True)


class NuggetCreateForm(NuggetFieldsForm):
    """A new nugget from a selection: code-point offsets into the canonical text."""

    start = forms.IntegerField(min_value=0)
    end = forms.IntegerField(min_value=1)
    span_text = forms.CharField(required=False, strip=False, max_length=1_000_000)
    client_uuid = forms.UUIDField()
    text = forms.CharField(required=False, max_length=5000, strip=True)

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if not data.get("text") and data.get("span_text"):
            # A fresh highlight starts as its own text; the assessor rewrites it later.
            data["text"] = data["span_text"]
        if "span_text" in self.data:
            data.setdefault("span_text", "")
        else:
            data["span_text"] = None
        return data


class NuggetUpdateForm(NuggetFieldsForm):
    version = forms.IntegerField(min_value=1)


class NuggetDeleteForm(forms.Form):
    version = forms.IntegerField(min_value=1, required=False)


class AspectCreateForm(forms.Form):
    """A new aspect's label; its length and uniqueness are the service's to check."""

    aspect_text = forms.CharField(required=False, max_length=10_000, strip=True)


class PreviewForm(forms.Form):
    """A draft nugget for the live match counts."""

    text = forms.CharField(max_length=5000, strip=True)
    keywords = KeywordsField()


def first_error(form: forms.Form) -> tuple[str, str]:
    """``(field, message)`` of the first validation error, for JSON answers."""
    field, errors = next(iter(form.errors.items()))
    return field, f"{field}: {errors[0]}" if field != "__all__" else str(errors[0])


class TopUpForm(forms.Form):
    """A top-up sample of a new run's documents outside the pool."""

    size = forms.IntegerField(
        min_value=1,
        max_value=200,
        initial=10,
        label="Draws per topic",
        help_text="at most this many documents per topic to judge",
    )


class NewRunForm(forms.Form):
    """A run file to evaluate against a finished job (a TREC run; .gz accepted)."""

    run = forms.FileField(
        label="Run file", help_text="TREC run format 'qid Q0 docno rank score tag'"
    )
    sample = forms.ChoiceField(required=False, label="Judged sample")

    def __init__(self, *args, samples=(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["sample"]).choices = [
            ("", "the job's own, else the newest")
        ] + [(str(s.pk), s.name) for s in samples]
