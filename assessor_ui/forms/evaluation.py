"""Forms of the researcher dashboard: runs, qrels comparison, trust diagnostics,
histograms and verification queues. Each page's rule fields come from the one
definition of a decision rule (:class:`assessor_ui.forms.rules.RuleKindFields`)."""

from __future__ import annotations

from typing import cast

from django import forms

from assessor_ui.forms.rules import RuleKindFields
from nuggets_app.errors import DomainError
from nuggets_app.evaluation import selectors as selectors_eval
from nuggets_app.evaluation.services import uncertainty
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.ir.measures import DEFAULT_MEASURES, measures_parse
from nuggets_app.models import Collection, Run
from nuggets_app.pooling.selectors import assessor_choices


class RuleFields(RuleKindFields):
    """The decision rule that turns match scores into inferred qrels (every field
    required)."""

    def rule(self) -> DecisionRule | None:
        """The rule chosen (checked by :meth:`RuleKindFields.clean`); None: each
        job's default rule (``rule_default``)."""
        return self.cleaned_data.get("rule")


class RunsForm(RuleFields):
    qrels = forms.ChoiceField(label="Qrels")
    measures = forms.CharField(initial=" ".join(DEFAULT_MEASURES))
    sample = forms.ChoiceField(required=False, label="statAP sample")
    expected = forms.ChoiceField(required=False, label="Expected measures under")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        cast(
            forms.ChoiceField, self.fields["qrels"]
        ).choices = selectors_eval.qrels_choices(collection)
        cast(forms.ChoiceField, self.fields["expected"]).choices = [("", "none")] + [
            (str(j.pk), f"p of {j.label}") for j in uncertainty.model_jobs(collection)
        ]
        cast(forms.ChoiceField, self.fields["sample"]).choices = [("", "none")] + [
            (str(s.pk), f"{s.pool.name} / {s.name} ({s.method})")
            for s in selectors_eval.statap_samples(collection)
        ]

    def clean_measures(self) -> list[str]:
        names = self.cleaned_data["measures"].split()
        try:
            return [str(m) for m in measures_parse(names)]
        except DomainError as error:
            raise forms.ValidationError(str(error)) from None


class CompareForm(RuleFields):
    qrels_a = forms.ChoiceField(label="Qrels A (reference)")
    qrels_b = forms.ChoiceField(label="Qrels B")
    measure = forms.CharField(initial="AP")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        choices = selectors_eval.qrels_choices(collection)
        cast(forms.ChoiceField, self.fields["qrels_a"]).choices = cast(
            forms.ChoiceField, self.fields["qrels_b"]
        ).choices = choices
        if len(choices) > 1:  # comparing a qrels with itself tells nothing
            self.fields["qrels_a"].initial = choices[0][0]
            self.fields["qrels_b"].initial = choices[1][0]

    def clean_measure(self) -> str:
        try:
            return str(measures_parse([self.cleaned_data["measure"]])[0])
        except DomainError as error:
            raise forms.ValidationError(str(error)) from None


class TrustForm(RuleFields):
    job = forms.ChoiceField(label="Matching job")
    human = forms.ChoiceField(label="Human qrels")
    bins = forms.IntegerField(min_value=1, max_value=100, initial=10)
    length_bins = forms.IntegerField(min_value=1, max_value=100, initial=10)

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        jobs = selectors_eval.done_jobs(collection)
        cast(forms.ChoiceField, self.fields["job"]).choices = [
            (str(j.pk), j.label) for j in jobs
        ]
        cast(forms.ChoiceField, self.fields["human"]).choices = [
            c
            for c in selectors_eval.qrels_choices(collection)
            if c[0].split(":")[0] in ("human", "qrels")
        ]


class HistogramForm(forms.Form):
    """Histogram analysis of any run's scores against a qrels source."""

    run = forms.ChoiceField(required=False, label="Run scores")
    run_qrels = forms.ChoiceField(required=False, label="against qrels")

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        runs = Run.objects.filter(collection=collection).order_by("name")
        cast(forms.ChoiceField, self.fields["run"]).choices = [("", "none")] + [
            (r.name, r.name) for r in runs
        ]
        cast(
            forms.ChoiceField, self.fields["run_qrels"]
        ).choices = selectors_eval.qrels_choices(collection)


class VerificationForm(RuleFields):
    job = forms.ChoiceField(label="Matching job")
    relevant = forms.IntegerField(min_value=0, initial=10, label="Inferred relevant")
    nonrelevant = forms.IntegerField(min_value=0, initial=5, label="Inferred non-rel.")
    uncertain = forms.IntegerField(
        min_value=0, initial=0, required=False, label="p closest to 0.5"
    )
    seed = forms.IntegerField(initial=1)
    name = forms.SlugField(required=False, max_length=200)
    assessors = forms.ModelMultipleChoiceField(
        assessor_choices(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="who judges the sample (each topic goes to 'overlap' of them)",
    )
    unassigned = forms.BooleanField(
        required=False,
        label="Draw it unassigned",
        help_text="assign it later with manage.py assign --sample NAME --all "
        "--assessors ...",
    )
    overlap = forms.IntegerField(min_value=1, initial=1)

    def __init__(self, data, collection: Collection):
        super().__init__(data)
        jobs = selectors_eval.done_jobs(collection)
        cast(forms.ChoiceField, self.fields["job"]).choices = [
            (str(j.pk), j.label) for j in jobs
        ]

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        if not data.get("assessors") and not data.get("unassigned"):
            self.add_error(
                "assessors",
                "choose at least one assessor, or tick 'Draw it unassigned'",
            )
        if data.get("assessors") and data.get("unassigned"):
            self.add_error(
                "unassigned", "an unassigned sample cannot have assessors too"
            )
        return data
