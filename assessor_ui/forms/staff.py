"""Forms of the staff pages: collections, uploads, pools, samples, assignments."""

from __future__ import annotations

import re
from typing import cast

from django import forms

from nuggets_app.collection.services.relevance import (
    RelevanceLevelError,
    relevance_level_check,
)
from nuggets_app.importers.documents import FORMATS as DOC_FORMATS
from nuggets_app.importers.nuggets import FORMATS as NUGGET_FORMATS
from nuggets_app.importers.topics import FORMATS as TOPIC_FORMATS
from nuggets_app.ir.judge_sampling import DEFAULT_JUDGE_WEIGHT
from nuggets_app.models import Collection, Judge, Run, Sample
from nuggets_app.pooling.selectors import assessor_choices
from nuggets_app.pooling.services.pools import unknown_topics
from nuggets_app.pooling.services.samples import DRAWABLE_METHODS


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(item, initial) for item in data]
        return [single(data, initial)]


class CollectionForm(forms.ModelForm):
    class Meta:
        model = Collection
        fields = ["name", "description"]
        help_texts = {"name": "letters, digits, - and _ (a slug)"}
        widgets = {"description": forms.Textarea(attrs={"rows": 1})}


class RelevanceLevelForm(forms.Form):
    """A collection's relevance level, filled with the level in force and checked by
    the one check of a level (:func:`relevance_level_check`)."""

    level = forms.IntegerField(
        required=False,
        label="Relevant at grade >=",
        help_text="TREC DL uses 2; empty: the smallest positive grade",
    )

    def __init__(self, *args, collection: Collection, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.collection = collection
        self.fields["level"].initial = collection.relevance_level

    def clean_level(self) -> int | None:
        level = self.cleaned_data["level"]
        if level is None:
            return None
        try:
            return relevance_level_check(collection=self.collection, level=level)
        except RelevanceLevelError as exc:
            raise forms.ValidationError(str(exc)) from None


class DocumentsUploadForm(forms.Form):
    file = forms.FileField(
        help_text="TREC SGML, JSONL, or a zip of .txt/.html files; .gz accepted"
    )
    fmt = forms.ChoiceField(
        label="Format",
        choices=[(f, f) for f in DOC_FORMATS if f != "dir"] + [("zip", "zip")],
        initial="auto",
    )
    # The choice of ``import_collection --changed-text``.
    changed_text = forms.ChoiceField(
        label="Judged documents whose text changes",
        choices=[
            ("refuse", "refuse the upload"),
            ("reanchor", "re-anchor their nuggets"),
        ],
        initial="refuse",
        required=False,
        help_text="re-anchoring moves each nugget to its span text in the new text; "
        "a nugget whose span text is gone still refuses the upload",
    )

    def clean_changed_text(self) -> str:
        return self.cleaned_data["changed_text"] or "refuse"


class TopicsUploadForm(forms.Form):
    file = forms.FileField(help_text="TREC topics, TREC XML or JSONL; .gz accepted")
    fmt = forms.ChoiceField(
        label="Format", choices=[(f, f) for f in TOPIC_FORMATS], initial="auto"
    )


class RunsUploadForm(forms.Form):
    # The metaclass moves declared fields into base_fields, so the form's own
    # ``files`` (the request's uploads) is not shadowed at run time.
    files = MultipleFileField(  # type: ignore[assignment]
        label="Run files",
        help_text="one or more TREC run files (qid Q0 docno rank score tag); .gz "
        "accepted; the run name is the tag column",
    )
    # The choice of ``import_runs --skip-unknown-documents``.
    skip_unknown_documents = forms.BooleanField(
        required=False,
        label="Skip documents not in the collection",
        help_text="their lines are skipped and counted instead of refusing the run; "
        "the other documents keep their ranks",
    )
    # The choice of ``import_runs --model``.
    model = forms.CharField(
        required=False,
        max_length=200,
        label="Model the runs used",
        help_text="e.g. the LLM that reranked them; a run that used an automatic "
        "judge's model is shown with its estimate without that judge",
    )


class QrelsUploadForm(forms.Form):
    file = forms.FileField(
        help_text="qrels (qid iter docno rel), prels, or subtopic (diversity) qrels "
        "(qid subtopic docno rel); .gz accepted"
    )
    name = forms.SlugField(max_length=200, help_text="name of these judgments")
    kind = forms.ChoiceField(
        choices=[
            ("auto", "auto"),
            ("qrels", "qrels"),
            ("prels", "prels"),
            ("subtopics", "subtopics (diversity)"),
        ],
        initial="auto",
        help_text="auto reads 4 columns as plain qrels: choose subtopics for "
        "diversity qrels",
    )


class NuggetsUploadForm(forms.Form):
    file = forms.FileField(
        help_text="nugget bank: JSONL, TREC QA nuggets, RAG or TREC TS; .gz accepted"
    )
    fmt = forms.ChoiceField(
        label="Format", choices=[(f, f) for f in NUGGET_FORMATS], initial="auto"
    )
    name = forms.SlugField(
        max_length=200, required=False, help_text="bank name; empty: the file name"
    )
    create_topics = forms.BooleanField(
        required=False, help_text="make a topic of every qid the collection lacks"
    )


UPLOAD_FORMS = {
    "documents": DocumentsUploadForm,
    "topics": TopicsUploadForm,
    "runs": RunsUploadForm,
    "qrels": QrelsUploadForm,
    "nuggets": NuggetsUploadForm,
}


class PoolForm(forms.Form):
    name = forms.SlugField(max_length=200)
    depth = forms.IntegerField(min_value=1, max_value=100000, initial=100)
    all_runs = forms.BooleanField(
        required=False, initial=True, label="All runs of the collection"
    )
    runs = forms.ModelMultipleChoiceField(
        Run.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="untick 'All runs of the collection' to pool a subset",
    )
    topics = forms.CharField(
        required=False,
        help_text="qids separated by spaces; empty: every topic the runs answer",
    )

    def __init__(self, *args, collection: Collection, **kwargs):
        super().__init__(*args, **kwargs)
        self.collection = collection
        cast(forms.ModelChoiceField, self.fields["runs"]).queryset = Run.objects.filter(
            collection=collection
        )

    def clean_topics(self) -> list[str] | None:
        """The qids asked, in order (None: every topic); unknown ones are an error."""
        qids = list(dict.fromkeys(self.cleaned_data["topics"].split()))
        unknown = unknown_topics(self.collection, qids)
        if unknown:
            raise forms.ValidationError(
                f"unknown topics in collection {self.collection.name}: "
                + ", ".join(unknown)
            )
        return qids or None

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if not data.get("all_runs") and not data.get("runs"):
            raise forms.ValidationError("choose some runs, or tick 'All runs'")
        return data


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*")


class SampleForm(forms.Form):
    name = forms.SlugField(max_length=200)
    method = forms.ChoiceField(
        choices=[
            (m, label) for m, label in Sample.Method.choices if m in DRAWABLE_METHODS
        ],
        initial=Sample.Method.STATAP,
    )
    size = forms.CharField(
        max_length=20,
        help_text="documents per topic, or P% of the mean pool size per topic",
    )
    seed = forms.IntegerField(initial=1)
    per_run_quota = forms.BooleanField(required=False, label="Per-run quota (statAP)")
    rounds = forms.IntegerField(
        min_value=1,
        max_value=10,
        initial=1,
        required=False,
        help_text="judge in this many rounds (the size is the total budget per topic): "
        "round 1 by statAP's design, later ones guided by the relevance model",
    )
    judge = forms.ModelChoiceField(
        Judge.objects.none(),
        required=False,
        label="Steered by judge (statAP)",
        help_text="documents the automatic judge calls relevant are likelier drawn; "
        "every inclusion probability stays exact (the size is then the expected "
        "number of documents per topic)",
    )
    judge_weight = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        initial=DEFAULT_JUDGE_WEIGHT,
        help_text="the judge's share of the sampling distribution (0: statAP's own)",
    )

    def __init__(self, *args, collection: Collection, **kwargs):
        super().__init__(*args, **kwargs)
        judges = Judge.objects.filter(collection=collection).order_by("name")
        if not judges.exists():  # nothing to steer with: the form stays short
            del self.fields["judge"], self.fields["judge_weight"]
            return
        cast(forms.ModelChoiceField, self.fields["judge"]).queryset = judges

    def clean_rounds(self) -> int:
        return self.cleaned_data["rounds"] or 1

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if data.get("judge") is None:
            data["judge_weight"] = None
            return data
        if data.get("method") != Sample.Method.STATAP or data.get("per_run_quota"):
            self.add_error(
                "judge", "a judge steers the statAP method only, without a quota"
            )
        elif (data.get("rounds") or 1) > 1:
            self.add_error("judge", "a judge steers a one-shot sample, not rounds")
        if data.get("judge_weight") is None:
            data["judge_weight"] = DEFAULT_JUDGE_WEIGHT
        return data

    def clean_size(self) -> tuple[int | None, float | None]:
        match = _SIZE.fullmatch(self.cleaned_data["size"])
        if not match:
            raise forms.ValidationError("a whole number, or a percentage such as 10%")
        number, percent = match.groups()
        if percent:
            value = float(number)
            if not 0 < value <= 100:
                raise forms.ValidationError("a percentage between 0 and 100")
            return None, value
        if "." in number or int(number) < 1:
            raise forms.ValidationError("a whole number of at least 1")
        return int(number), None


class ExtendForm(forms.Form):
    extra = forms.IntegerField(min_value=1, max_value=100000, label="Extra per topic")


def _assessors():
    return assessor_choices()


class AssignForm(forms.Form):
    assessors = forms.ModelMultipleChoiceField(
        _assessors(), widget=forms.CheckboxSelectMultiple
    )
    overlap = forms.IntegerField(
        min_value=1, initial=1, help_text="assessors per topic (k)"
    )
    topics = forms.CharField(
        required=False, help_text="qids separated by spaces; empty: every sampled topic"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["assessors"]).queryset = _assessors()


class ReassignForm(forms.Form):
    source = forms.ModelChoiceField(_assessors(), label="Unfinished work of")
    target = forms.ModelChoiceField(_assessors(), label="goes to")
    topics = forms.CharField(
        required=False, help_text="qids separated by spaces; empty: all unfinished"
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        cast(forms.ModelChoiceField, self.fields["source"]).queryset = _assessors()
        cast(forms.ModelChoiceField, self.fields["target"]).queryset = _assessors()
