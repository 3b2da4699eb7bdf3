"""Reading a server-drawn SVG chart back into numbers: tests check that a mark stands
where the value it draws is on the chart's own axis (its tick labels), so a chart is
checked against the table beside it, not against its own geometry code."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

SVG = "{http://www.w3.org/2000/svg}"


def chart_root(text: str, chart_id: str | None = None) -> ET.Element:
    """The ``<svg>`` element of an SVG document, or the one with ``id`` =
    ``chart_id`` inside a page's HTML (cut out as it stands in the page)."""
    if chart_id is not None:
        text = svg_element(text, chart_id)
    elif text.startswith("<?xml"):
        text = text.split("?>", 1)[1]
    return ET.fromstring(text)


def svg_element(text: str, chart_id: str) -> str:
    """The ``<svg>`` element of chart ``chart_id`` as the page holds it (text)."""
    start = 0
    while True:
        start = text.index('<svg xmlns="http://www.w3.org/2000/svg"', start)
        if f'id="{chart_id}"' in text[start : text.index(">", start)]:
            return text[start : text.index("</svg>", start) + len("</svg>")]
        start += 1


def axis(root: ET.Element, which: str) -> Callable[[float], float]:
    """Pixel to value on the ``x`` or ``y`` axis, from its first and last tick."""
    ticks = [t for t in root.iter(f"{SVG}text") if t.get("class") == f"{which}-tick"]
    coord = "x" if which == "x" else "y"
    (p0, v0), (p1, v1) = [
        (float(t.get(coord, "nan")), float(t.text or "nan"))
        for t in (ticks[0], ticks[-1])
    ]
    return lambda px: v0 + (px - p0) * (v1 - v0) / (p1 - p0)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    """The ``<g>`` elements of class ``cls`` (one per point, run, series)."""
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def child(g: ET.Element, tag: str, cls: str | None = None) -> ET.Element:
    found = [e for e in g.iter(f"{SVG}{tag}") if cls is None or e.get("class") == cls]
    return found[0]
