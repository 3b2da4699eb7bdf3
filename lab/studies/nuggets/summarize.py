"""Tables of docs/results/nuggets.md: the default estimator with and without the nugget
features, paired per seed.

Usage (from the repository root):
    python lab/studies/nuggets/summarize.py [REPORTS] [--interval METHOD]
REPORTS (default var/nuggets) holds what lab/studies/nuggets/run.sh wrote:
``<setting>/size<P>-seed<S>-<arm>/report.json`` with arm ``with`` (the default model)
and ``nonug`` (``--ablate nuggets``), or ``ev`` (``--nugget-evidence``, an earlier
measurement). A setting without a ``with`` report of a seed falls back to the
committed reports of that time (docs/results/adaptive/reports-beale, and
docs/results/reusability for leave-one-group-out), measured before the one path.
``--interval``: the coverage and width of that interval method of
``estimators.model_assisted.intervals`` (default: the report's own reported interval).
Settings or seeds without reports are left out.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
ADAPTIVE = ROOT / "docs/results/adaptive/reports-beale"
REUSE = ROOT / "docs/results/reusability"
SEEDS = (1, 2, 3, 4, 5)
# setting -> (collection, sample %, reusability?)
SETTINGS = {
    "dl19-5": ("dl19", 5, False),
    "dl19-10": ("dl19", 10, False),
    **{
        f"{c}-10": (c, 10, False)
        for c in ("adi", "cranfield", "medline", "cisi", "cacm", "lisa", "npl-vaswani")
    },
    "ts-10": ("ts", 10, False),  # TREC TS, the assessors' own nuggets (--nuggets human)
    "dl19-reuse": ("dl19", 10, True),
    "cranfield-reuse": ("cranfield", 10, True),
}
ARMS = {"nonug": "without nuggets", "ev": "with nugget evidence"}
INTERVAL: str | None = None  # --interval


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def _with(
    base: Path, setting: str, collection: str, size: int, reuse: bool, seed: int
) -> dict | None:
    fresh = _arm(base, setting, size, seed, "with")
    if fresh is not None:
        return fresh
    if reuse:
        return _load(REUSE / collection / f"leave-one-group-out-seed{seed}.json")
    return _load(ADAPTIVE / collection / f"one{size}-seed{seed}" / "report.json")


def _arm(base: Path, setting: str, size: int, seed: int, arm: str) -> dict | None:
    return _load(base / setting / f"size{size}-seed{seed}-{arm}" / "report.json")


def _width(estimator: dict) -> float:
    if INTERVAL is not None:
        return 2 * estimator["intervals"][INTERVAL]["half_width"]
    widths = [
        hi - lo
        for lo, hi in (estimator["ci"] or {}).values()
        if math.isfinite(lo) and math.isfinite(hi)
    ]
    return statistics.fmean(widths) if widths else math.nan


def _coverage(estimator: dict) -> float:
    if INTERVAL is not None:
        return estimator["intervals"][INTERVAL]["coverage"]
    return estimator["coverage"]


def metrics(report: dict, reuse: bool) -> dict[str, float]:
    """The figures compared, from one report."""
    if reuse:
        ma = report["reusability"]["model_assisted"]
        eap = report["reusability"]["eap"]
        return {
            "rank error (default)": ma["mean_abs_rank_error"],
            "relative error (default)": ma["mean_rel_error"],
            "tau (default)": ma["tau"],
            "rank error (EAP)": eap["mean_abs_rank_error"],
        }
    ma = report["estimators"]["model_assisted"]
    eap = report["estimators"]["eap"]
    return {
        "tau (default)": ma["tau"],
        "tau_AP (default)": ma["tau_ap"],
        "coverage (default)": _coverage(ma),
        "interval width (default)": _width(ma),
        "tau (EAP)": eap["tau"],
        "tau_AP (EAP)": eap["tau_ap"],
    }


def _fmt(value: float) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def table(base: Path, setting: str, arm: str) -> str | None:
    """Markdown: per metric, the mean with nuggets and in ``arm``, the mean paired
    difference (arm - with) ± its standard error, and the per-seed differences."""
    collection, size, reuse = SETTINGS[setting]
    pairs = []
    for seed in SEEDS:
        a = _with(base, setting, collection, size, reuse, seed)
        b = _arm(base, setting, size, seed, arm)
        if a is not None and b is not None:
            pairs.append((seed, metrics(a, reuse), metrics(b, reuse)))
    if not pairs:
        return None
    seeds = [s for s, _, _ in pairs]
    lines = [
        f"**{setting}**, {ARMS[arm]} against with nuggets, seeds "
        f"{', '.join(map(str, seeds))}:",
        "",
        "| | with nuggets | " + ARMS[arm] + " | difference ± SE | per seed |",
        "|---|---|---|---|---|",
    ]
    for name in pairs[0][1]:
        with_nuggets = [p[1][name] for p in pairs]
        without = [p[2][name] for p in pairs]
        d = [y - x for x, y in zip(with_nuggets, without, strict=True)]
        se = statistics.stdev(d) / math.sqrt(len(d)) if len(d) > 1 else math.nan
        per = " ".join(f"{v:+.3f}" for v in d)
        lines.append(
            f"| {name} | {_fmt(statistics.fmean(with_nuggets))} "
            f"| {_fmt(statistics.fmean(without))} "
            f"| {statistics.fmean(d):+.3f} ± {_fmt(se)} | {per} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    global INTERVAL
    if "--interval" in argv:
        at = argv.index("--interval")
        INTERVAL = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :]
    base = Path(argv[1]) if len(argv) > 1 else ROOT / "var/nuggets"
    for setting in SETTINGS:
        for arm in ARMS:
            text = table(base, setting, arm)
            if text:
                print(text + "\n")


if __name__ == "__main__":
    main(sys.argv)
