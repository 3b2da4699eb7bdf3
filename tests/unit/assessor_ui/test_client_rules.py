"""The rules the page scripts receive are the server's own."""

import json
import re

from django.template import Context, Template

from assessor_ui.forms.rules import RULE_FIELDS, RuleKindFields
from nuggets_app.inference.services.decision_rule import RULE_KINDS
from nuggets_app.judging.services.nuggets import MIN_SPAN_CHARS, MIN_SPAN_WORDS
from nuggets_app.models import MatchJob


def test_the_pages_scripts_get_the_servers_rules_as_json():
    html = Template("{% load client %}{% client_rules %}").render(Context())
    found = re.fullmatch(
        r'<script id="app-rules" type="application/json">(.*)</script>', html
    )
    assert found is not None
    rules = json.loads(found[1])
    assert rules["minSpanChars"] == MIN_SPAN_CHARS
    assert rules["minSpanWords"] == MIN_SPAN_WORDS
    assert set(rules["jobFinal"]) == {"done", "failed", "cancelled"}
    assert set(rules["jobFinal"]) == {str(s) for s in MatchJob.FINAL}
    # Every kind the form offers says which of the form's fields it reads.
    form_kinds = {k for k, _ in RuleKindFields().fields["kind"].choices}
    assert set(rules["ruleFields"]) == form_kinds
    assert set(RULE_KINDS) <= form_kinds
    fields = set(RuleKindFields().fields)
    assert all(set(f) <= fields for f in rules["ruleFields"].values())
    assert RULE_FIELDS["top_n"] == ("n",)
