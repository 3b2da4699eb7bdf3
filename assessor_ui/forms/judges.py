"""Forms of the automatic judges' pages: a judge's labels file and what the judge is."""

from __future__ import annotations

from django import forms

from nuggets_app.evaluation.services.judge_plans import DEFAULT_HALF_WIDTH
from nuggets_app.importers.judge_labels import FORMATS
from nuggets_app.judges.services import JudgeInfo


class JudgeUploadForm(forms.Form):
    file = forms.FileField(
        help_text="TREC qrels, scores (qid Q0 docno score), a run, or JSONL/CSV with "
        "prob_0..prob_k or prob_yes; .gz accepted"
    )
    judge = forms.CharField(
        max_length=200, help_text="a judge of this name has its labels replaced"
    )
    fmt = forms.ChoiceField(
        label="Format", choices=[(f, f) for f in FORMATS], initial="auto"
    )
    model = forms.CharField(max_length=200, required=False)
    prompt = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    date = forms.DateField(required=False, help_text="YYYY-MM-DD")
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 1}))
    threshold = forms.FloatField(
        required=False,
        help_text="scores only: the score from which the judge calls a document "
        "relevant (default 0.5 for scores in [0, 1])",
    )

    def info(self) -> JudgeInfo:
        """What the judge is, from the cleaned fields."""
        data = self.cleaned_data
        return JudgeInfo(
            model=data["model"],
            prompt=data["prompt"],
            date=data["date"],
            notes=data["notes"],
            threshold=data["threshold"],
        )


class JudgePlanForm(forms.Form):
    """The target of the planning table: a half-width on each topic's R."""

    half_width = forms.FloatField(
        min_value=0.0001,
        initial=DEFAULT_HALF_WIDTH,
        label="Target half-width",
        help_text="of the 95% interval on each topic's R",
    )
    unit = forms.ChoiceField(
        choices=[("share", "share of R (0.2: +/- 20%)"), ("documents", "documents")],
        initial="share",
    )
