"""Documents that carry judgments or nuggets and come back with another text.

Nugget offsets index into a document's text, so a re-import that changes a judged
document's text either is refused or moves each nugget to its span text in the new
text (``reanchor``). The same reads serve the import and the upload's check, so the
check finds what the import would refuse.
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from nuggets_app.errors import DomainError
from nuggets_app.ir.spans import span_reanchor
from nuggets_app.models import Collection, Document, Judgment, Nugget

CHANGED_TEXT = ("refuse", "reanchor")
"""What a re-import does with a document whose text changes while it carries
judgments or nuggets: refuse the file, or move each nugget to its span text."""


class ChangedTextError(DomainError):
    """A re-import would change the text of judged documents or lose nuggets."""


def judged_text_changes(*, collection: Collection, texts: dict[str, str]) -> dict:
    """``{document pk: docno}`` of the documents of ``texts`` (docno -> new text)
    that carry judgments or nuggets in ``collection`` and whose text would change."""
    # EXISTS per document (an index probe each), not a join and DISTINCT: the import
    # asks this for every batch, and a DISTINCT over the joined tables grew with the
    # collection (the import rate fell 2.3 times from 100,000 to 1,000,000 documents).
    judged = (
        Document.objects.filter(collection=collection, docno__in=list(texts))
        .filter(
            Q(Exists(Nugget.objects.filter(document=OuterRef("pk"))))
            | Q(Exists(Judgment.objects.filter(document=OuterRef("pk"))))
        )
        .values_list("pk", "docno", "text")
    )
    return {pk: docno for pk, docno, text in judged if texts[docno] != text}


def collection_judged(collection: Collection) -> bool:
    """Whether any document of ``collection`` carries a judgment or a nugget."""
    return (
        Nugget.objects.filter(document__collection=collection).exists()
        or Judgment.objects.filter(document__collection=collection).exists()
    )


def lost_nuggets(changed: dict, texts: dict[str, str]) -> list[tuple[str, str]]:
    """The nuggets of the ``changed`` documents whose span text is gone from the new
    text (they cannot be re-anchored): ``(docno, description)`` each."""
    lost = []
    for nugget in Nugget.objects.filter(document_id__in=list(changed)).order_by("pk"):
        docno = changed[nugget.document_id]
        if span_reanchor(texts[docno], nugget.span_text, nugget.start) is None:
            lost.append(
                (
                    docno,
                    f"nugget {nugget.pk} of document {docno} "
                    f"({nugget.span_text[:40]!r})",
                )
            )
    return lost


class TextGuard:
    """Keeps judged documents' offsets true across a re-import (see CHANGED_TEXT)."""

    SHOWN = 10

    def __init__(self, policy: str):
        self.policy = policy
        self.changed: list[str] = []  # docnos whose judged text would change
        self.lost: list[str] = []  # nuggets whose span text is gone
        self.reanchored = 0
        # Whether the collection had judged documents when the import began; a
        # collection without any (a first import) needs no look-up per batch: the
        # documents the import writes are invisible to others until it commits.
        self._judged: bool | None = None

    def check(self, collection: Collection, rows: list[tuple]) -> None:
        """Before a batch is written: find its judged documents whose text changes,
        and re-anchor their nuggets (or note them for refusal)."""
        if self._judged is None:
            self._judged = collection.pk is not None and collection_judged(collection)
        if not self._judged:
            return
        new_text = {row[1]: row[3] for row in rows}
        changed = judged_text_changes(collection=collection, texts=new_text)
        if not changed:
            return
        self.changed += sorted(changed.values())
        if self.policy != "reanchor":
            return
        self.lost += [lost for _, lost in lost_nuggets(changed, new_text)]
        moved = []
        for nugget in Nugget.objects.filter(document_id__in=list(changed)):
            text = new_text[changed[nugget.document_id]]
            start = span_reanchor(text, nugget.span_text, nugget.start)
            if start is not None and start != nugget.start:
                nugget.start, nugget.end = start, start + len(nugget.span_text)
                moved.append(nugget)
        Nugget.objects.bulk_update(moved, ["start", "end"], batch_size=500)
        self.reanchored += len(moved)

    def finish(self, name: str) -> None:
        """After the last batch: refuse the whole file when offsets would break."""
        if self.policy == "refuse" and self.changed:
            raise ChangedTextError(
                f"{len(self.changed)} document(s) of {name!r} that carry judgments or "
                f"nuggets would change text ({_some(self.changed, self.SHOWN)}); "
                "nothing was imported. Re-import re-anchoring the nuggets, each moved "
                "to its span text in the new text, or import into a new collection "
                "name.",
                field="changed_text",
            )
        if self.lost:
            raise ChangedTextError(
                f"{len(self.lost)} nugget(s) cannot be re-anchored: their span text is "
                f"not in the new text ({_some(self.lost, self.SHOWN)}); nothing was "
                "imported."
            )


def _some(items: list[str], shown: int) -> str:
    more = f", and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
