"""The form of the release page: which finished job, and how assessors are named."""

from __future__ import annotations

from django import forms

from nuggets_app.models import Collection, MatchJob


def _job_label(job: MatchJob) -> str:
    return f"Job {job.pk} · {job.name}" if job.name else f"Job {job.pk}"


class ReleaseForm(forms.Form):
    job = forms.ModelChoiceField(
        queryset=MatchJob.objects.none(),
        help_text="A finished job of the collection with a fitted relevance model: "
        "its merged and probabilistic qrels and its estimates go into the release.",
    )
    real_names = forms.BooleanField(
        required=False,
        label="Name assessors by their user names",
        help_text="Default: pseudonyms (assessor-1, assessor-2, ...).",
    )

    def __init__(self, *args, collection: Collection, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        jobs = MatchJob.objects.filter(
            collection=collection,
            status=MatchJob.Status.DONE,
            inference__fitted_at__isnull=False,
        ).order_by("-pk")
        field = self.fields["job"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = jobs
        field.label_from_instance = _job_label  # type: ignore[method-assign,assignment]
