"""The rules the server applies, sent to the page scripts as one JSON island.

The scripts read them (``common.js``: ``serverRules()``) instead of copying them: the
smallest nugget span, the fields each decision-rule kind reads and the statuses in
which a matching job is finished. A page whose scripts read it puts
``{% client_rules %}`` before them.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString

from assessor_ui.forms.rules import RULE_FIELDS
from nuggets_app.judging.services.nuggets import MIN_SPAN_CHARS, MIN_SPAN_WORDS
from nuggets_app.models import MatchJob

register = template.Library()

ELEMENT_ID = "app-rules"


def client_rules_data() -> dict[str, Any]:
    """The rules as the scripts read them (keys in camelCase, as JavaScript names)."""
    return {
        "minSpanChars": MIN_SPAN_CHARS,
        "minSpanWords": MIN_SPAN_WORDS,
        "ruleFields": {kind: list(fields) for kind, fields in RULE_FIELDS.items()},
        "jobFinal": [str(status) for status in MatchJob.FINAL],
    }


@register.simple_tag
def client_rules() -> SafeString:
    """``<script type="application/json" id="app-rules">`` with the rules."""
    return json_script(client_rules_data(), ELEMENT_ID)
