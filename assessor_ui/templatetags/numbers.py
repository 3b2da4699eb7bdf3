"""How the pages write numbers: the presentation of a table's cells, kept out of views.

``{{ value|number }}`` gives a float with 4 decimals and ``n/a`` for NaN (an undefined
figure, e.g. a mean over no topic), anything else as text; ``{% if value|is_number %}``
tells a numeric cell (aligned right) from a text one.
"""

from __future__ import annotations

import math

from django import template

register = template.Library()


@register.filter
def is_number(value: object) -> bool:
    """True for an int or a float (not a bool): the cell is aligned as a number."""
    return isinstance(value, int | float) and not isinstance(value, bool)


@register.filter
def number(value: object) -> str:
    """A float with 4 decimals, ``n/a`` for NaN; any other value as its text."""
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.4f}"
    return str(value)


@register.filter
def interval(estimate: object, digits: int = 3) -> str:
    """A figure with its 95% interval, ``0.521 [0.305, 0.737]`` (``n/a`` when it is
    not a number): any value with ``value``, ``low`` and ``high``."""
    value = getattr(estimate, "value", math.nan)
    if not isinstance(value, float | int) or not math.isfinite(value):
        return "n/a"
    low, high = estimate.low, estimate.high  # type: ignore[attr-defined]
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
