"""A new run's file as a staff member uploads it: read whole, every bad line named."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings

from nuggets_app.evaluation.services.estimates import EstimateError, Scores
from nuggets_app.importers.errors import ErrorSink, ImportFormatError
from nuggets_app.importers.runs import parse_run


class RunFileError(EstimateError):
    """An uploaded run file with bad lines; ``problems`` lists each one (file and
    line), up to ``UPLOAD_MAX_PROBLEMS``, as the other uploads do."""

    def __init__(self, name: str, problems: list[str]) -> None:
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{name}: {count}, nothing kept")
        self.problems = problems


def run_upload_read(name: str, chunks: Iterable[bytes]) -> tuple[str, Scores]:
    """``(tag, {qid: {docno: score}})`` of an uploaded TREC run file (``.gz`` by its
    name); bad lines raise :class:`RunFileError` naming the file and every line."""
    base = Path(name).name or "run"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / base
        with path.open("wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
        sink = ErrorSink(settings.UPLOAD_MAX_PROBLEMS)
        try:
            lines = list(parse_run(path, sink=sink))
            sink.check()
        except ImportFormatError as error:
            found = getattr(error, "errors", [error])
            raise RunFileError(
                base,
                [ImportFormatError.__str__(e).replace(str(path), base) for e in found],
            ) from None
        except (OSError, EOFError, UnicodeDecodeError) as error:
            raise EstimateError(f"{base}: cannot read the run ({error})") from None
    scores: dict[str, dict[str, float]] = {}
    for line in lines:
        scores.setdefault(line.qid, {})[line.docno] = line.score
    return lines[0].tag, scores
