"""The fields of a decision rule, built from its one definition in
:mod:`nuggets_app.inference.services.rules` (kinds, labels, defaults), which the
command-line options are built from too."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from nuggets_app.inference.services.rules import (
    DEFAULT_CHOICE,
    DEFAULT_KIND,
    DEFAULT_THRESHOLD,
    DEFAULT_TOP_N,
    RULE_CHOICES,
    RULE_DESCRIPTIONS,
)


def _descriptions(chosen: object) -> str:
    """Each rule's description, one per kind, all but the chosen one hidden (pages
    without JavaScript show the rule computed with; ``rule_form.js`` follows the
    select where a page has it)."""
    return "".join(
        format_html(
            '<span data-rule-description="{}"{}>{} </span>',
            kind,
            "" if kind == chosen else mark_safe(" hidden"),
            text,
        )
        for kind, text in RULE_DESCRIPTIONS.items()
    )


class RuleKindFields(forms.Form):
    """A rule's kind, its threshold and its N; with ``required=False`` the threshold
    and N may be left empty (the definition's defaults then apply)."""

    kind = forms.ChoiceField(
        choices=(DEFAULT_CHOICE, *RULE_CHOICES), initial=DEFAULT_KIND, label="Rule"
    )
    threshold = forms.FloatField(
        min_value=0.0, max_value=1.0, initial=DEFAULT_THRESHOLD
    )
    n = forms.IntegerField(min_value=1, initial=DEFAULT_TOP_N, label="N")

    def __init__(self, *args: Any, required: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        chosen = self.data.get("kind") if self.is_bound else None
        self.fields["kind"].help_text = _descriptions(chosen or DEFAULT_KIND)
        self.fields["threshold"].required = required
        self.fields["n"].required = required
