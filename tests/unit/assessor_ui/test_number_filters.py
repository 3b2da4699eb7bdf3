"""The pages' number filters: 4 decimals, n/a for NaN, numbers told from text, a
figure with its interval."""

import math

from django.template import Context, Template

from assessor_ui.templatetags.numbers import interval, is_number, number
from nuggets_app.ir.judge_audit import Estimate


def test_number_writes_floats_with_four_decimals_and_nan_as_na():
    assert number(0.123456) == "0.1235"
    assert number(math.nan) == "n/a"
    assert number(3) == "3"
    assert number("run-a") == "run-a"


def test_is_number_tells_numbers_from_text_and_booleans():
    assert is_number(1)
    assert is_number(0.5)
    assert is_number(math.nan)
    assert not is_number(True)
    assert not is_number("0.5")


def test_a_table_row_renders_through_the_filters():
    template = Template(
        "{% load numbers %}{% for c in row %}"
        "<td{% if c|is_number %} class=num{% endif %}>{{ c|number }}</td>{% endfor %}"
    )
    html = template.render(Context({"row": ["BM25", 0.25, math.nan, 7]}))
    assert html == (
        "<td>BM25</td><td class=num>0.2500</td><td class=num>n/a</td>"
        "<td class=num>7</td>"
    )


def test_an_estimate_is_written_with_its_interval():
    assert interval(Estimate(0.5214, 0.3051, 0.7377)) == "0.521 [0.305, 0.738]"
    assert interval(Estimate(127.06, 108.8, 145.5), 1) == "127.1 [108.8, 145.5]"
    assert interval(Estimate(math.nan, math.nan, math.nan)) == "n/a"
    assert interval(None) == "n/a"
