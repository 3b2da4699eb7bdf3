"""How the researcher pages name a table's columns: in words, the code name kept for
the CSV and shown as the header's tooltip.

``{{ name|column_label }}`` gives the words a header shows (``ci_high`` -> ``95%
high``); a column without words of its own shows its name with spaces for
underscores, so a header wraps between words, never inside one.
"""

from __future__ import annotations

from django import template

register = template.Library()

# The CSV's column names (nuggets_app.evaluation.services) and the words shown for them.
LABELS = {
    "maAP": "MAP estimate",
    "ci_low": "95% low",
    "ci_high": "95% high",
    "model_only": "model only",
    "EAP_check": "EAP check",
    "bias_diff": "bias diff.",
    "bias_diff_ci_low": "bias 95% low",
    "bias_diff_ci_high": "bias 95% high",
    "bias_flag": "flag",
    "num_q": "topics",
    "VAR_MAP": "variance",
    "mean_estR": "mean est. R",
    "valid_topics": "valid topics",
    "rank_statMAP": "rank by statMAP",
    "rank_EAP": "rank by EAP",
    "rank_change": "rank change",
    "kendall_tau": "Kendall's tau",
    "tau_ap": "tau AP",
    "tau_ap_symmetric": "tau AP symmetric",
    "score_a": "score A",
    "score_b": "score B",
    "rank_a": "rank A",
    "rank_b": "rank B",
    "delta": "places gained",
    "mean_p": "mean p",
    "observed_rate": "observed rate",
    "brier": "Brier score",
}


@register.filter
def column_label(name: str) -> str:
    """The words a header shows for the column ``name``."""
    return LABELS.get(name) or str(name).replace("_", " ")
