"""HTML for documents: canonical plain text, and sanitized HTML for display.

Both functions are pure and deterministic. :func:`html_to_text` gives the canonical text
that assessors read and highlight and that matching reads; :func:`sanitize_html` gives
the only HTML ever shown (nh3, a conservative allow-list, no images, no scripts).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import nh3

# Content never shown as text.
_DROP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "head",
        "title",
        "iframe",
        "object",
        "embed",
        "svg",
        "math",
        "select",
        "textarea",
    }
)
# Elements that end a line; the PARAGRAPH ones also leave an empty line after them.
_PARAGRAPH = frozenset(
    {
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "blockquote",
        "pre",
        "table",
        "ul",
        "ol",
        "dl",
        "figure",
        "hr",
    }
)
_BLOCK = _PARAGRAPH | frozenset(
    {
        "address",
        "article",
        "aside",
        "br",
        "caption",
        "dd",
        "details",
        "div",
        "dt",
        "fieldset",
        "figcaption",
        "footer",
        "form",
        "header",
        "li",
        "main",
        "nav",
        "section",
        "summary",
        "td",
        "th",
        "tr",
        "body",
        "html",
    }
)
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
_SPACES = re.compile(r"[ \t\f\v\r\n\u00a0]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class _TextExtractor(HTMLParser):
    """Collects text, turning block boundaries into newline markers."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        # Text pieces, and ints for line breaks (1: new line, 2: empty line after).
        self.parts: list[str | int] = []
        self.title: list[str] = []
        self.dropping: list[str] = []
        self.in_title = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _VOID:
            self._boundary(tag)
            return
        if tag == "title":
            self.in_title = True
        if tag in _DROP:
            self.dropping.append(tag)
        elif not self.dropping:
            self._boundary(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        if not self.dropping:
            self._boundary(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _DROP:
            if tag in self.dropping:
                while self.dropping and self.dropping.pop() != tag:
                    pass
            return
        if not self.dropping:
            self._boundary(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if not self.dropping:
            self.parts.append(data)

    def _boundary(self, tag: str) -> None:
        if tag in _PARAGRAPH:
            self.parts.append(2)
        elif tag in _BLOCK:
            self.parts.append(1)


def _tidy(parts: list[str | int]) -> str:
    """Join text pieces: spaces collapse inside a line, adjacent breaks merge (the larger
    wins), lines are stripped, no leading or trailing breaks."""
    lines: list[str] = []
    inline: list[str] = []
    pending = 0
    for part in [*parts, 1]:
        if isinstance(part, str):
            inline.append(part)
            continue
        text = _SPACES.sub(" ", _CONTROL.sub("", "".join(inline))).strip(" ")
        inline = []
        if text:
            if lines and pending:
                lines.append("\n" * pending)
            lines.append(text)
            pending = 0
        pending = max(pending, part)
    return "".join(lines)


def html_extract(html: str) -> tuple[str, str]:
    """``(title, text)``: the ``<title>`` (spaces collapsed) and :func:`html_to_text`."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    title = _SPACES.sub(" ", _CONTROL.sub("", "".join(parser.title))).strip()
    return title, _tidy(parser.parts)


def html_to_text(html: str) -> str:
    """Canonical plain text of an HTML document.

    Scripts, styles and other non-text content are dropped; entities are decoded; block
    elements become line breaks (paragraph-like ones leave one empty line); runs of
    spaces inside a line collapse to one space; lines are stripped; control characters
    other than newline and tab are removed.
    """
    return html_extract(html)[1]


ALLOWED_TAGS = frozenset(
    {
        "a",
        "abbr",
        "acronym",
        "address",
        "article",
        "aside",
        "b",
        "bdi",
        "bdo",
        "big",
        "blockquote",
        "br",
        "caption",
        "center",
        "cite",
        "code",
        "col",
        "colgroup",
        "dd",
        "del",
        "details",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "figcaption",
        "figure",
        "font",
        "footer",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "i",
        "ins",
        "kbd",
        "li",
        "main",
        "mark",
        "nav",
        "ol",
        "p",
        "pre",
        "q",
        "rp",
        "rt",
        "ruby",
        "s",
        "samp",
        "section",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "time",
        "tr",
        "tt",
        "u",
        "ul",
        "var",
        "wbr",
    }
)
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "acronym": {"title"},
    "td": {"colspan", "rowspan"},
    "th": {"colspan", "rowspan", "scope"},
    "ol": {"start"},
    "time": {"datetime"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
_CLEAN_CONTENT = frozenset(
    {
        "script",
        "style",
        "title",
        "noscript",
        "template",
        "textarea",
        "select",
        "iframe",
        "object",
        "embed",
        "svg",
        "math",
        "head",
    }
)
_ABSOLUTE_URL = re.compile(r"(?i)(?:https?://|mailto:)")


def _keep_absolute_links(tag: str, attribute: str, value: str) -> str | None:
    # Relative links would point into this application; crawled pages have no business
    # sending the assessor there.
    if attribute == "href" and not _ABSOLUTE_URL.match(value.strip()):
        return None
    return value


def sanitize_html(html: str) -> str:
    """HTML safe to show to an assessor (nh3 with a conservative allow-list).

    Kept: text structure (paragraphs, headings, lists, tables, inline emphasis) and
    absolute http/https/mailto links, which get ``rel="noopener noreferrer"``. Removed:
    scripts, styles, frames, forms, images and other embedded or remote content, event
    handlers and every other attribute, comments, and ``javascript:`` or relative URLs.
    """
    return nh3.clean(
        html,
        tags=set(ALLOWED_TAGS),
        clean_content_tags=set(_CLEAN_CONTENT),
        attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
        attribute_filter=_keep_absolute_links,
        url_schemes=set(URL_SCHEMES),
        link_rel="noopener noreferrer",
        strip_comments=True,
    )
