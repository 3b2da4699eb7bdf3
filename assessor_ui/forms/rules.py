"""The fields of a decision rule, built from its one definition in
:mod:`nuggets_app.inference.services.rule_grammar` (kinds, labels, defaults), which the
command-line options are built from too. A value is checked by the rule itself
(:class:`nuggets_app.inference.services.decision_rule.DecisionRule`), so a form refuses
exactly what a command refuses, with the same sentence."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from nuggets_app.errors import DomainError
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.rule_grammar import (
    DEFAULT_CHOICE,
    DEFAULT_KIND,
    DEFAULT_THRESHOLD,
    DEFAULT_TOP_N,
    RULE_CHOICES,
    RULE_DESCRIPTIONS,
    rule_from_values,
)

# The fields each rule kind reads (rule_from_values); the forms' script hides the
# others. The job's default rule reads none.
RULE_FIELDS: dict[str, tuple[str, ...]] = {
    "threshold": ("threshold",),
    "probability": ("threshold",),
    "top_n": ("n",),
    "expected_f1": (),
    DEFAULT_KIND: (),
}


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
    and N may be left empty (the definition's defaults then apply). A valid form has
    ``cleaned_data["rule"]``: the rule, or None for each job's default."""

    kind = forms.ChoiceField(
        choices=(DEFAULT_CHOICE, *RULE_CHOICES), initial=DEFAULT_KIND, label="Rule"
    )
    threshold = forms.FloatField(initial=DEFAULT_THRESHOLD)
    n = forms.IntegerField(initial=DEFAULT_TOP_N, label="N")

    def __init__(self, *args: Any, required: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        chosen = self.data.get("kind") if self.is_bound else None
        self.fields["kind"].help_text = _descriptions(chosen or DEFAULT_KIND)
        self.fields["threshold"].required = required
        self.fields["n"].required = required
        self.fields["kind"].required = required

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        kind = data.get("kind") or DEFAULT_KIND
        data["rule"] = None
        if kind and kind != DEFAULT_KIND and not self.errors:
            try:
                data["rule"] = rule_from_values(
                    kind, threshold=data.get("threshold"), n=data.get("n")
                )
            except DomainError as exc:
                field = "n" if kind == "top_n" else "threshold"
                self.add_error(field, str(exc))
        return data

    def rule_query(self, rule: DecisionRule | None) -> dict[str, str]:
        """The query string fields that give ``rule`` (None: the default rule), for
        links that must carry the rule in use, never a refused value."""
        if rule is None:
            return {"kind": DEFAULT_KIND}
        out = {"kind": rule.kind}
        if rule.kind in ("threshold", "probability"):
            out["threshold"] = repr(rule.threshold)
        if rule.kind == "top_n":
            out["n"] = str(rule.n)
        return out
