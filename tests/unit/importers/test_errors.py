"""The errors a parser reports: several at once are read in line order."""

import pytest

from nuggets_app.importers.errors import ErrorSink, ImportFormatError


def test_errors_found_later_are_still_listed_by_line():
    sink = ErrorSink(limit=10)
    sink.add(ImportFormatError("r.run", 3, "score is not a finite decimal number"))
    sink.add(ImportFormatError("r.run", 1, "unknown topic"))
    sink.add(ImportFormatError("r.run", 2, "unknown document"))
    with pytest.raises(ImportFormatError, match=r"\Ar\.run:1: unknown topic\n") as got:
        sink.check()
    assert [line.split(":")[1] for line in str(got.value).splitlines()] == [
        "1",
        "2",
        "3",
    ]
