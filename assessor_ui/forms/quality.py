"""Forms of the staff pages that resolve and check several assessors' work: the
aggregation rule, adjudication, guidelines, known answers."""

from __future__ import annotations

from django import forms

from nuggets_app.ir.aggregation import RULES, TIES, Aggregation, AggregationError
from nuggets_app.models import Qrels


class AggregationForm(forms.Form):
    rule = forms.ChoiceField(
        choices=[(r, r) for r in RULES],
        help_text="how several assessors' grades become the human label",
    )
    primary = forms.CharField(
        required=False, help_text="username of the primary assessor (rule primary)"
    )
    ties = forms.ChoiceField(
        choices=[(t, t) for t in TIES], help_text="a majority tie goes to this grade"
    )
    fallback = forms.ChoiceField(
        choices=[(r, r) for r in RULES[:3]],
        help_text="where nobody adjudicated, or the primary did not judge",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            data["aggregation"] = Aggregation(
                rule=data["rule"],
                primary=data.get("primary") or None,
                ties=data["ties"],
                fallback=data["fallback"],
            )
        except AggregationError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return data


class AdjudicationForm(forms.Form):
    qid = forms.CharField(max_length=64, widget=forms.HiddenInput)
    docno = forms.CharField(max_length=200, widget=forms.HiddenInput)
    relevance = forms.IntegerField()
    version = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    note = forms.CharField(max_length=200, required=False)


class QueueFilterForm(forms.Form):
    """The adjudication queue's filters (GET)."""

    topic = forms.CharField(required=False, label="Topics", help_text="qids")
    assessor = forms.CharField(required=False, help_text="username")
    spread = forms.BooleanField(required=False, label="Only grades more than one apart")
    open = forms.BooleanField(required=False, label="Only those not adjudicated")


class GuidelinesForm(forms.Form):
    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16}),
        help_text="Markdown; shown to assessors on the judging page (key g)",
    )


class KnownAnswersForm(forms.Form):
    source = forms.ChoiceField(
        choices=[("qrels", "imported qrels"), ("adjudicated", "adjudicated decisions")]
    )
    qrels = forms.ModelChoiceField(queryset=Qrels.objects.none(), required=False)
    per_topic = forms.IntegerField(min_value=1, max_value=1000, initial=10)
    seed = forms.IntegerField(initial=1)

    def __init__(self, *args, collection, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["qrels"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Qrels.objects.filter(
            collection=collection, kind__in=[Qrels.Kind.QRELS, Qrels.Kind.PRELS]
        )


class InterleaveForm(forms.Form):
    sample = forms.IntegerField(widget=forms.HiddenInput)
    rate = forms.FloatField(
        min_value=0.01,
        max_value=1,
        initial=0.1,
        help_text="known answers per drawn document (0.1: one in ten)",
    )
    seed = forms.IntegerField(initial=1)


class QualityLevelForm(forms.Form):
    level = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0.8,
        required=False,
        help_text="flag an assessor whose agreement with the known answers is below",
    )
