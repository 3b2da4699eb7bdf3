"""Coverage of the answers' interval over topics, measured by simulation.

Usage: python -m lab.studies.answer_intervals [--trials 4000] [--seed 1]

A system's mean nugget recall over ``n`` topics, each topic's recall a binomial share
of 2-8 nuggets at a topic difficulty ``q ~ Beta(2, 2(1-μ)/μ)`` (mean μ). For each
``n`` and μ: how often the product's interval
(:func:`nuggets_app.ir.proportions.mean_proportion_interval`, what
``evaluate_answers`` reports) and Student's t interval (what it reported before) hold
μ, and their mean widths. Prints a Markdown table (docs/results/answers.md).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics

from scipy import stats

from nuggets_app.ir.proportions import mean_proportion_interval

TOPICS = (2, 3, 5, 10, 25, 50)
MEANS = (0.05, 0.2, 0.5)


def _t_interval(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    half = stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean - half, mean + half


def _recalls(rng: random.Random, n: int, mu: float) -> list[float]:
    values = []
    for _ in range(n):
        q = rng.betavariate(2.0, 2.0 * (1 - mu) / mu)
        nuggets = rng.randint(2, 8)
        values.append(sum(rng.random() < q for _ in range(nuggets)) / nuggets)
    return values


def coverage_table(trials: int, seed: int) -> list[str]:
    """The table's lines: topics, μ, cover and width of each interval."""
    rng = random.Random(seed)
    lines = [
        "| topics | μ | cover (product) | width (product) | cover (t) | width (t) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in TOPICS:
        for mu in MEANS:
            held = held_t = 0
            width = width_t = 0.0
            for _ in range(trials):
                values = _recalls(rng, n, mu)
                found = mean_proportion_interval(values)
                low, high = _t_interval(values)
                held += found.low <= mu <= found.high
                held_t += low <= mu <= high
                width += found.high - found.low
                width_t += high - low
            lines.append(
                f"| {n} | {mu} | {held / trials:.3f} | {width / trials:.3f} | "
                f"{held_t / trials:.3f} | {width_t / trials:.3f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("\n".join(coverage_table(args.trials, args.seed)))


if __name__ == "__main__":
    main()
