"""Forms of the matching-job pages: launching a job, choosing its decision rule."""

from __future__ import annotations

import re
from typing import cast
from urllib.parse import urlencode

from django import forms

from assessor_ui.forms.rules import RuleKindFields
from nuggets_app.collection.services.topics import UnknownTopics, topics_find
from nuggets_app.inference.services import readiness
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.models import Collection, MatchJob, Pool, Sample


class LaunchForm(forms.Form):
    collection = forms.ModelChoiceField(Collection.objects.all())
    source = forms.ChoiceField(
        choices=MatchJob.Source.choices,
        help_text="which documents are scored for each topic",
    )
    pool = forms.ModelChoiceField(
        Pool.objects.select_related("collection"), required=False
    )
    sample = forms.ModelChoiceField(
        Sample.objects.select_related("pool"), required=False
    )
    topics = forms.CharField(
        required=False, help_text="qids separated by spaces; empty: all"
    )
    k = forms.IntegerField(
        min_value=1,
        max_value=10,
        initial=3,
        label="k",
        help_text="shingle size: a nugget matches through every run of k consecutive "
        "words (word order ignored); 1 matches single words, larger k asks for "
        "phrases",
    )
    lam = forms.FloatField(
        min_value=1e-9,
        max_value=1.0,
        initial=0.5,
        label="Lambda",
        help_text="in (0, 1]: how much a shingle's words may be spread out; a shingle "
        "whose k words lie within S document words scores lambda^((S-k)/k), so 1 "
        "ignores the spread and small values want the words side by side. Re-scoring "
        "with another lambda later reads no document again",
    )
    stem = forms.ChoiceField(choices=[("porter", "Porter"), ("none", "none")])
    stopwords = forms.ChoiceField(choices=[("default", "default"), ("none", "none")])
    grades = forms.CharField(
        required=False, help_text="only nuggets of these grades, e.g. 1 2; empty: all"
    )
    aspects = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="only nuggets of these aspects, one per line (commas also "
        "separate); empty: all",
    )
    name = forms.CharField(required=False, max_length=200)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The only choice is chosen already (a fresh install has one collection).
        for name in ("collection", "pool", "sample"):
            field = cast(forms.ModelChoiceField, self.fields[name])
            only = list(field.queryset[:2]) if field.queryset is not None else []
            if len(only) == 1:
                field.initial = only[0].pk

    def clean_grades(self) -> list[int]:
        text = self.cleaned_data["grades"]
        if not re.fullmatch(r"[\s\d-]*", text):
            raise forms.ValidationError("grades are integers separated by spaces")
        return [int(g) for g in text.split()]

    def clean_aspects(self) -> list[str]:
        return aspects_parse(self.cleaned_data["aspects"])

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if data.get("collection") is not None and "topics" in data:
            try:
                data["topic_list"] = topics_find(
                    collection=data["collection"], qids=data["topics"].split()
                )
            except UnknownTopics as exc:
                self.add_error("topics", str(exc))
        return data


def aspects_parse(text: str) -> list[str]:
    """Aspect names one per line or separated by commas, each once, blanks dropped."""
    names = (a.strip() for line in text.splitlines() for a in line.split(","))
    return list(dict.fromkeys(a for a in names if a))


class RuleForm(RuleKindFields):
    """The decision rule of a job's pages and exports. Unbound, it stands for the
    job's default rule (p >= 0.5 with a fitted model, else the paper rule at 0.5);
    bound with a refused value it shows the sentence, the pages go on with the
    default rule and say so (:attr:`refused`), and the download links carry only the
    rule in use (:meth:`query`)."""

    later = forms.BooleanField(
        required=False,
        label="Also the documents scored after the job (imported later, or unpooled "
        "documents of new runs)",
    )

    def __init__(self, *args, job: MatchJob | None = None, **kwargs):
        super().__init__(*args, required=False, **kwargs)
        self.default = (
            readiness.rule_default(job) if job is not None else DecisionRule()
        )

    @property
    def refused(self) -> bool:
        """Whether the rule asked for was refused (the default stands in)."""
        return self.is_bound and not self.is_valid()

    def rule(self) -> DecisionRule:
        if not self.is_bound or not self.is_valid():
            return self.default
        return self.cleaned_data.get("rule") or self.default

    def later_wanted(self) -> bool:
        return bool(self.is_bound and self.is_valid() and self.cleaned_data["later"])

    def query(self) -> str:
        """The query string of the rule in use (and ``later``), for download links."""
        fields = self.rule_query(
            self.cleaned_data.get("rule") if self.is_bound and self.is_valid() else None
        )
        if self.later_wanted():
            fields["later"] = "on"
        return urlencode(fields)
