"""A new run's flag and top-up advice follow its interval as it stands: a judged
top-up is never asked for again, and no top-up is advised for an interval already
within the target."""

from __future__ import annotations

from nuggets_app.evaluation.services.outside_pool import (
    NewRunFigures,
    new_run_flag_reason,
    top_up_advice,
)
from nuggets_app.ir.outside_pool import RunInterval
from nuggets_app.ir.run_intervals import Z_95

FLAG = "its bias check is outside its interval; more"


def _figures(half_width: float, topped: tuple[str, ...] = ()) -> NewRunFigures:
    """Figures whose interval is ``± half_width``, a third of its variance the
    model's on 3 documents outside the pool."""
    var = (half_width / Z_95) ** 2
    interval = RunInterval(
        estimate=0.3, var_sampling=2 * var / 3, var_documents=var / 3,
        var_calibration=0.0, n_topics=6, documents=3, expected_relevant=1.0,
    )  # fmt: skip
    return NewRunFigures(None, interval, topped)  # type: ignore[arg-type]


def test_no_top_up_is_advised_for_an_interval_already_within_the_target():
    figures = _figures(0.045)
    assert figures.draws_for(0.05) == (0, 0.0)
    assert top_up_advice(figures, job_id=1, run="r", half_width=0.05) == ""


def test_a_top_up_is_advised_for_an_interval_wider_than_the_target():
    advice = top_up_advice(_figures(0.08), job_id=1, run="r", half_width=0.05)
    assert "Draw a top-up sample" in advice
    assert "3 of its documents outside the pool" in advice


def test_a_judged_top_up_is_not_asked_for_again_in_the_flag():
    before = new_run_flag_reason(_figures(0.08), FLAG)
    assert "judge a top-up sample" in before
    after = new_run_flag_reason(_figures(0.08, ("1", "2")), FLAG)
    assert "judge a top-up sample" not in after
    assert after.startswith("its bias check is outside its interval; ")
    assert "its judged top-up corrects topics 1, 2" in after
    assert "still counts 3 documents outside the pool of other topics" in after
