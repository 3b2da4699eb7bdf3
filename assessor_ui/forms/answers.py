"""The form of the answers page: a JSONL of generated answers and which nuggets."""

from __future__ import annotations

from django import forms

from nuggets_app.ir.answers import DEFAULT_THRESHOLD
from nuggets_app.models import Collection

MAX_ANSWERS_BYTES = 20 * 1024 * 1024
ALL_NUGGETS = ""


class AnswersForm(forms.Form):
    answers = forms.FileField(
        label="Answers (JSONL)",
        help_text='One answer per line: {"run_id", "qid", "text", "citations"?}.',
    )
    bank = forms.ChoiceField(label="Nuggets", required=False)
    threshold = forms.FloatField(
        initial=DEFAULT_THRESHOLD,
        min_value=0.01,
        max_value=1.0,
        help_text="An answer contains a nugget when the min-span score is >= this.",
    )

    def __init__(self, *args, collection: Collection, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        banks = collection.nugget_banks.values_list("name", flat=True)
        field = self.fields["bank"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [
            (ALL_NUGGETS, "Every nugget of the topic"),
            *((name, f"Bank {name}") for name in banks),
        ]

    def clean_answers(self):
        upload = self.cleaned_data["answers"]
        if upload.size > MAX_ANSWERS_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size} bytes; at most {MAX_ANSWERS_BYTES} are "
                "evaluated on this page (use manage.py evaluate_answers for more)."
            )
        return upload
