"""Documents that carry judgments or nuggets and come back with another text.

Nugget offsets index into a document's text, so a re-import that changes a judged
document's text either is refused or moves each nugget to its span text in the new
text (``reanchor``). The same reads serve the import and the upload's check, so the
check finds what the import would refuse.
"""

from __future__ import annotations

from django.db.models import Q

from nuggets_app.errors import DomainError
from nuggets_app.ir.spans import span_reanchor
from nuggets_app.models import Collection, Document, Nugget

CHANGED_TEXT = ("refuse", "reanchor")
"""What a re-import does with a document whose text changes while it carries
judgments or nuggets: refuse the file, or move each nugget to its span text."""


class ChangedTextError(DomainError):
    """A re-import would change the text of judged documents or lose nuggets."""


def judged_text_changes(*, collection: Collection, texts: dict[str, str]) -> dict:
    """``{document pk: docno}`` of the documents of ``texts`` (docno -> new text)
    that carry judgments or nuggets in ``collection`` and whose text would change."""
    judged = (
        Document.objects.filter(collection=collection, docno__in=list(texts))
        .filter(Q(nuggets__isnull=False) | Q(judgments__isnull=False))
        .distinct()
        .values_list("pk", "docno", "text")
    )
    return {pk: docno for pk, docno, text in judged if texts[docno] != text}


def lost_nuggets(changed: dict, texts: dict[str, str]) -> list[tuple[str, str]]:
    """The nuggets of the ``changed`` documents whose span text is gone from the new
    text (they cannot be re-anchored): ``(docno, description)`` each."""
    lost = []
    for nugget in Nugget.objects.filter(document_id__in=list(changed)).order_by("pk"):
        docno = changed[nugget.document_id]
        if span_reanchor(texts[docno], nugget.span_text, nugget.start) is None:
            lost.append(
                (docno, f"nugget {nugget.pk} of document {docno} "
                 f"({nugget.span_text[:40]!r})")
            )  # fmt: skip
    return lost


class TextGuard:
    """Keeps judged documents' offsets true across a re-import (see CHANGED_TEXT)."""

    SHOWN = 10

    def __init__(self, policy: str):
        self.policy = policy
        self.changed: list[str] = []  # docnos whose judged text would change
        self.lost: list[str] = []  # nuggets whose span text is gone
        self.reanchored = 0

    def check(self, collection: Collection, rows: list[tuple]) -> None:
        """Before a batch is written: find its judged documents whose text changes,
        and re-anchor their nuggets (or note them for refusal)."""
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
                "nothing was imported. Re-import with --changed-text reanchor to move "
                "each nugget to its span text in the new text, or import into a new "
                "collection name."
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
