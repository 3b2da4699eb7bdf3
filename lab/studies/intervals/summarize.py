"""Summarise the interval measurements: coverage and half-width of each interval method.

Usage: python lab/studies/intervals/summarize.py DIR [PUBLISHED] [--reported METHOD]
Reads DIR/dl19/d100-size<P>-seed<S>/report.json (lab/studies/dl19/run.sh) and
DIR/collections/<collection>/size<P>-seed<S>/report.json (lab/studies/run_all.sh),
``simulate`` reports with ``estimators.model_assisted.intervals``, and prints Markdown
tables per setting:

* per interval method of nuggets_app/ir/intervals.py, and statAP's interval: the
  coverage of the pooled truth (share of runs whose true MAP on the topics averaged
  lies inside), mean over seeds and the worst seed, and the mean half-width;
* per seed, the reported method's and statAP's coverage;
* the estimate's Kendall tau and MAP RMSE against the full qrels (the interval
  methods share one estimate);
* with PUBLISHED (docs/results/adaptive/reports-beale, the one-shot 10% reports of
  the default estimator before the interval methods,
  PUBLISHED/<collection>/one10-seed<S>/report.json): their coverage, half-width, tau
  and MAP RMSE over all five seeds, and the largest difference of a run's MAP between
  the two on the seeds measured here (0: the same estimate).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# The methods of nuggets_app/ir/intervals.py; reports of a checkout with more candidate
# methods (the threshold and moderated variants compared on the results page) list
# theirs too, in the order found.
METHODS = ("linearised", "anticipated", "model_only", "combined", "sparse")
REPORTED = "sparse"  # REPORTED.interval of nuggets_app/ir/estimator.py; --reported
LABELS = {
    "npl-vaswani": "NPL",
    "dl19": "DL19",
    "medline": "MEDLINE",
    "lisa": "LISA",
    "cranfield": "Cranfield",
}


def _seed(path: Path) -> int:
    """The seed in a report's path (``.../one10-seed3/report.json`` -> 3)."""
    found = re.search(r"seed(\d+)", str(path))
    if found is None:
        raise SystemExit(f"{path}: no seed in the path")
    return int(found[1])


def _reports(root: Path) -> dict[tuple[str, str], list[tuple[int, dict]]]:
    found: dict[tuple[str, str], list[tuple[int, dict]]] = defaultdict(list)
    for path in sorted(root.glob("dl19/*/report.json")):
        match = re.fullmatch(r"d100-size(\d+)-seed(\d+)", path.parent.name)
        if match:
            found[("dl19", match[1])].append((int(match[2]), _load(path)))
    for path in sorted(root.glob("collections/*/*/report.json")):
        match = re.fullmatch(r"size(\d+)-seed(\d+)", path.parent.name)
        if match:
            key = (path.parent.parent.name, match[1])
            found[key].append((int(match[2]), _load(path)))
    return {k: sorted(v, key=lambda x: x[0]) for k, v in sorted(found.items())}


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _label(name: str) -> str:
    return LABELS.get(name, name.upper())


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _rmse(report: dict) -> float:
    full = report["systems"]["map"]["full"]
    scores = report["estimators"]["model_assisted"]["map"]
    return math.sqrt(statistics.fmean((scores[r] - full[r]) ** 2 for r in full))


def _row(name: str, size: str, seeds: list[tuple[int, dict]], method: str) -> list:
    if method == "statap":
        parts = [r["estimators"]["statap"] for _, r in seeds]
    else:
        parts = [
            r["estimators"]["model_assisted"]["intervals"][method] for _, r in seeds
        ]
    coverage = [p["coverage"] for p in parts]
    return [
        f"{_label(name)} {size}%",
        method if method != "statap" else "statAP",
        str(len(seeds)),
        _fmt(statistics.fmean(coverage)),
        _fmt(min(coverage)),
        _fmt(statistics.fmean(p["half_width"] for p in parts)),
    ]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _methods(groups: dict) -> list[str]:
    extra = {
        m
        for seeds in groups.values()
        for _, r in seeds
        for m in r["estimators"]["model_assisted"]["intervals"]
    } - set(METHODS)

    def family_then_number(method: str) -> tuple[str, int]:
        found = re.fullmatch(r"(\D+)(\d*)", method)
        assert found is not None
        return found[1], int(found[2] or 0)

    return [*METHODS, *sorted(extra, key=family_then_number)]


def summarize(root: Path, reported: str = REPORTED) -> list[str]:
    groups = _reports(root)
    methods = [*_methods(groups), "statap"]
    names = [m if m != "statap" else "statAP" for m in methods]
    out = ["### Coverage per interval method: mean over the seeds (worst seed)", ""]
    rows, widths = [], []
    for (name, size), seeds in groups.items():
        cells = [_row(name, size, seeds, method) for method in methods]
        label = f"{_label(name)} {size}% ({len(seeds)} seeds)"
        rows.append([label, *(f"{c[3]} ({c[4]})" for c in cells)])
        widths.append([label, *(c[5] for c in cells)])
    out += [*_table(["setting", *names], rows), ""]
    out += ["### Mean half-width per interval method", ""]
    out += [*_table(["setting", *names], widths), ""]
    out += ["### Per seed: the reported method and statAP", ""]
    rows = []
    for (name, size), seeds in groups.items():
        for method in (reported, "statap"):
            key = "statap" if method == "statap" else None
            values = [
                r["estimators"]["statap"]["coverage"]
                if key
                else r["estimators"]["model_assisted"]["intervals"][method]["coverage"]
                for _, r in seeds
            ]
            rows.append(
                [
                    f"{_label(name)} {size}%",
                    "statAP" if key else method,
                    " ".join(
                        f"{s}: {_fmt(v)}"
                        for (s, _), v in zip(seeds, values, strict=True)
                    ),
                ]
            )
    out += [*_table(["setting", "interval", "coverage by seed"], rows), ""]
    out += ["### The estimate (shared by every interval method)", ""]
    rows = [
        [
            f"{_label(name)} {size}%",
            str(len(seeds)),
            _fmt(
                statistics.fmean(
                    r["estimators"]["model_assisted"]["tau"] for _, r in seeds
                )
            ),
            _fmt(statistics.fmean(_rmse(r) for _, r in seeds)),
            _fmt(
                statistics.fmean(
                    len(r["estimators"]["model_assisted"]["model_only_topics"])
                    for _, r in seeds
                ),
                1,
            ),
        ]
        for (name, size), seeds in groups.items()
    ]
    header = ["setting", "seeds", "tau", "MAP RMSE", "model-only topics (mean)"]
    out += [*_table(header, rows), ""]
    return out


def published(root: Path, published_root: Path) -> list[str]:
    groups = _reports(root)
    rows = []
    for (name, size), seeds in groups.items():
        paths = sorted(published_root.glob(f"{name}/one{size}-seed*/report.json"))
        if not paths:
            continue
        old = {_seed(p): _load(p) for p in paths}
        parts = [r["estimators"]["model_assisted"] for r in old.values()]
        coverage = [p["coverage"] for p in parts]
        half = [
            statistics.fmean((h - lo) / 2 for lo, h in p["ci"].values()) for p in parts
        ]
        moved = max(
            abs(
                r["estimators"]["model_assisted"]["map"][run]
                - old[s]["estimators"]["model_assisted"]["map"][run]
            )
            for s, r in seeds
            if s in old
            for run in r["estimators"]["model_assisted"]["map"]
        )
        rows.append(
            [
                f"{_label(name)} {size}%",
                str(len(old)),
                _fmt(statistics.fmean(coverage)),
                _fmt(min(coverage)),
                _fmt(statistics.fmean(half)),
                _fmt(statistics.fmean(p["tau"] for p in parts)),
                _fmt(statistics.fmean(_rmse(r) for r in old.values())),
                f"{moved:.1e}",
            ]
        )
    header = [
        "setting",
        "seeds",
        "coverage (mean)",
        "worst seed",
        "half-width",
        "tau",
        "MAP RMSE",
        "largest MAP difference",
    ]
    return [
        "### Published before (linearised interval, seeds 1-5)",
        "",
        *_table(header, rows),
        "",
    ]


if __name__ == "__main__":
    args = sys.argv[1:]
    chosen = REPORTED
    if "--reported" in args:
        at = args.index("--reported")
        chosen = args[at + 1]
        args = args[:at] + args[at + 2 :]
    lines = summarize(Path(args[0]), chosen)
    if len(args) > 1:
        lines += published(Path(args[0]), Path(args[1]))
    print("\n".join(lines))
