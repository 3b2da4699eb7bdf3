"""Documents from ``ir_datasets`` (optional: only when the package and its files exist).

ir_datasets is not a requirement of this project; users who have it and a dataset's
files locally can import that dataset's documents without converting them first.
"""

from __future__ import annotations

from collections.abc import Iterator

from nuggets_app.importers.errors import ImportOptionError
from nuggets_app.lib.html import html_extract, sanitize_html

from .errors import ImportFormatError
from .records import DocRecord, check_docno, check_storable, normalize_newlines


def _load(dataset_id: str):
    try:
        import ir_datasets
    except ImportError:
        raise ImportOptionError(
            "--ir-datasets needs the ir_datasets package (pip install ir_datasets)"
        ) from None
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise ImportOptionError(f"unknown ir_datasets id {dataset_id!r}") from None


def parse_ir_datasets(dataset_id: str) -> Iterator[DocRecord]:
    """Yield the documents of an ir_datasets dataset; ``line`` is the document's position.

    The text is the ``text`` field, else ``body``; a ``title`` field becomes the title;
    an ``html`` field (when there is no text) is converted and kept sanitized.
    """
    dataset = _load(dataset_id)
    if not dataset.has_docs():
        raise ImportOptionError(f"ir_datasets {dataset_id!r} has no documents")
    where = f"ir_datasets:{dataset_id}"
    for position, doc in enumerate(dataset.docs_iter(), start=1):
        docno = check_docno(where, position, str(doc.doc_id))
        title = str(getattr(doc, "title", "") or "")
        text = getattr(doc, "text", None) or getattr(doc, "body", None)
        html = ""
        if text is None and getattr(doc, "html", None):
            raw = (
                doc.html.decode("utf-8", "replace")
                if isinstance(doc.html, bytes)
                else doc.html
            )
            title_from_html, text = html_extract(raw)
            title = title or title_from_html
            html = sanitize_html(raw)
        if text is None:
            raise ImportFormatError(where, position, "document without text", got=docno)
        text = check_storable(where, position, "text", normalize_newlines(str(text)))
        yield DocRecord(position, docno, normalize_newlines(title).strip(), text, html)
