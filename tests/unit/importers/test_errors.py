"""The errors a parser reports: several at once are read in line order."""

from nuggets_app.importers.errors import ErrorSink, ImportFormatError


def test_errors_found_later_are_still_listed_by_line():
    sink = ErrorSink(limit=10)
    sink.add(ImportFormatError("r.run", 3, "score is not a finite decimal number"))
    sink.add(ImportFormatError("r.run", 1, "unknown topic"))
    sink.add(ImportFormatError("r.run", 2, "unknown document"))
    try:
        sink.check()
    except ImportFormatError as errors:
        assert [line.split(":")[1] for line in str(errors).splitlines()] == [
            "1",
            "2",
            "3",
        ]
        assert errors.line == 1
    else:
        raise AssertionError("the sink held errors")
