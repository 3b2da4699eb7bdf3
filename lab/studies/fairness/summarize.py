"""Summarise the fairness reports: estimators' tau and tau_AP, interval coverage, the
DL19 run-family table and the model's MAP over the unjudged pooled documents.

Usage: python lab/studies/fairness/summarize.py [DIR]   (default: var/results/fairness)
Reads DIR/dl19/d<D>-size<P>-seed<S>/report.json,
DIR/collections/<collection>/size<P>-seed<S>/report.json and the one-shot arms of
var/results/adaptive, DIR/<collection>/one<P>-seed<S>/report.json (``simulate`` reports with
the ``estimators`` keys) and prints Markdown tables:

* per collection and sample size: mean ± sd over seeds of tau and tau_AP (against the
  full-qrels MAP ranking) for sample_only, statap, eap and model_assisted, and the
  coverage of the statAP and model-assisted 95% intervals (share of runs whose true
  value, MAP under the full qrels restricted to the pooled documents, lies inside);
* DL19 run families: per estimator, the mean over the family's runs and the seeds of
  (estimator MAP / full-qrels MAP), for the BM25 family and the BERT/neural family
  (run-name patterns below, matched against the runs in the reports), and the gap
  (BM25 - BERT), with its sd over seeds; the same against the pooled truth;
* the model's MAP over the unjudged pooled documents against BM25 with relevance
  feedback (report keys ``map_unjudged`` and ``baseline_map_unjudged``);
* the done-when checks.
"""

from __future__ import annotations

import fnmatch
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[3] / "var/results/fairness"

ESTIMATORS = ("sample_only", "statap", "eap", "model_assisted")
INTERVALS = ("statap", "model_assisted")
BM25 = (
    "bm25base_p",
    "bm25tuned_p",
    "bm25*_ax_p",
    "bm25*_prf_p",
    "bm25*_rm3_p",
    "srchvrs_ps_run1",
    "UNH_bm25",
)
NEURAL = (
    "idst_bert_*",
    "p_bert",
    "p_exp_*bert",
    "ICT-BERT2",
    "ICT-CKNRM_*",
    "ms_duet_passage",
)
FAMILY_GAP = 0.03
COVERAGE = 0.90
TAU_SLACK = 0.01


def _reports(root: Path) -> dict[tuple[str, str], list[dict]]:
    """``(collection label, size) -> reports`` in seed order."""
    found: dict[tuple[str, str], list[tuple[int, dict]]] = defaultdict(list)
    for path in sorted(root.glob("dl19/*/report.json")):
        match = re.fullmatch(r"d(\d+)-size(\d+)-seed(\d+)", path.parent.name)
        if match:
            label = f"dl19 (depth {match[1]})"
            found[(label, match[2])].append((int(match[3]), _load(path)))
    for path in sorted(root.glob("collections/*/*/report.json")):
        match = re.fullmatch(r"size(\d+)-seed(\d+)", path.parent.name)
        if match:
            key = (path.parent.parent.name, match[1])
            found[key].append((int(match[2]), _load(path)))
    # The layout of var/results/adaptive (one-shot arms): <collection>/one<P>-seed<S>.
    for path in sorted(root.glob("*/one*-seed*/report.json")):
        match = re.fullmatch(r"one(\d+)-seed(\d+)", path.parent.name)
        if match:
            name = path.parent.parent.name
            label = "dl19 (depth 100)" if name == "dl19" else name
            found[(label, match[1])].append((int(match[2]), _load(path)))
    return {
        k: [r for _, r in sorted(v, key=lambda x: x[0])]
        for k, v in sorted(found.items())
    }


def _load(path: Path) -> dict:
    report = json.loads(path.read_text())
    if "estimators" not in report:
        raise SystemExit(f"{path}: no 'estimators' (a report from before them)")
    return report


def _stats(values: list[float | None]) -> tuple[float, float] | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    sd = statistics.stdev(known) if len(known) > 1 else 0.0
    return statistics.fmean(known), sd


def _pm(values: list[float | None]) -> str:
    found = _stats(values)
    return "n/a" if found is None else f"{found[0]:.3f} ± {found[1]:.3f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def agreement_tables(groups: dict[tuple[str, str], list[dict]]) -> list[str]:
    out = ["## Ranking agreement with the full qrels (mean ± sd over seeds)", ""]
    for field, title in (("tau", "Kendall's tau"), ("tau_ap", "tau_AP")):
        rows = [
            [
                name,
                f"{size}%",
                str(len(reports)),
                *(
                    _pm([r["estimators"][e][field] for r in reports])
                    for e in ESTIMATORS
                ),
            ]
            for (name, size), reports in groups.items()
        ]
        out += [f"### {title}", ""]
        out += [*_table(["collection", "sample", "seeds", *ESTIMATORS], rows), ""]
    rows = [
        [
            name,
            f"{size}%",
            *(
                _pm([r["estimators"][e][f] for r in reports])
                for e in INTERVALS
                for f in ("coverage", "coverage_all_topics")
            ),
            *(
                _pm([statistics.fmean(_half_widths(r, e)) for r in reports])
                for e in INTERVALS
            ),
        ]
        for (name, size), reports in groups.items()
    ]
    out += ["### Coverage of the 95% intervals and their mean half-width", ""]
    header = [
        "collection",
        "sample",
        "statAP",
        "statAP (all topics)",
        "model-assisted",
        "model-assisted (all topics)",
        "statAP half-width",
        "model-assisted half-width",
    ]
    out += [*_table(header, rows), ""]
    rows = [
        [name, f"{size}%", *(_pm([_bias(r, e) for r in reports]) for e in ESTIMATORS)]
        for (name, size), reports in groups.items()
    ]
    out += ["### Mean over runs of estimate - pooled truth (mean ± sd over seeds)", ""]
    out += [*_table(["collection", "sample", *ESTIMATORS], rows), ""]
    return out


def _bias(report: dict, estimator: str) -> float:
    truth = report["pooled_truth"]["map"]
    scores = report["estimators"][estimator]["map"]
    return statistics.fmean(scores[r] - truth[r] for r in truth)


def _half_widths(report: dict, estimator: str) -> list[float]:
    ci = report["estimators"][estimator]["ci"]
    return [
        (hi - lo) / 2 for lo, hi in ci.values() if lo is not None and hi is not None
    ]


def _family(runs: list[str], patterns: tuple[str, ...]) -> list[str]:
    return sorted(r for r in runs if any(fnmatch.fnmatchcase(r, p) for p in patterns))


def _shares(
    report: dict, runs: list[str], estimator: str, against: str = "full"
) -> list[float]:
    """Estimator MAP / reference MAP per run: ``full`` (the full-qrels MAP) or
    ``pooled_truth`` (the full qrels restricted to the pooled documents)."""
    if against == "full":
        reference = report["systems"]["map"]["full"]
    else:
        reference = report["pooled_truth"]["map"]
    if estimator == "pooled_truth":
        scores = report["pooled_truth"]["map"]
    else:
        scores = report["estimators"][estimator]["map"]
    return [scores[r] / reference[r] for r in runs if reference[r]]


def family_tables(groups: dict[tuple[str, str], list[dict]]) -> list[str]:
    out = ["## DL19: share of the full-qrels MAP by run family", ""]
    for (name, size), reports in groups.items():
        if not name.startswith("dl19"):
            continue
        runs = sorted(reports[0]["systems"]["map"]["full"])
        bm25, neural = _family(runs, BM25), _family(runs, NEURAL)
        out += [
            f"### {name}, {size}% sample, {len(reports)} seeds",
            "",
            f"BM25 family ({len(bm25)}): {', '.join(bm25)}.",
            f"BERT/neural family ({len(neural)}): {', '.join(neural)}.",
            "",
        ]
        for against, what in (
            ("full", "estimator MAP / full-qrels MAP"),
            ("pooled_truth", "estimator MAP / pooled-truth MAP"),
        ):
            rows = []
            for e in (*ESTIMATORS, "pooled_truth"):
                b = [x for r in reports for x in _shares(r, bm25, e, against)]
                n = [x for r in reports for x in _shares(r, neural, e, against)]
                gaps = [
                    statistics.fmean(_shares(r, bm25, e, against))
                    - statistics.fmean(_shares(r, neural, e, against))
                    for r in reports
                ]
                sd = statistics.stdev(gaps) if len(gaps) > 1 else 0.0
                rows.append(
                    [
                        e,
                        f"{statistics.fmean(b):.3f}",
                        f"{statistics.fmean(n):.3f}",
                        f"{statistics.fmean(b) - statistics.fmean(n):+.3f}",
                        f"{sd:.3f}",
                    ]
                )
            out += [f"Mean over runs and seeds of {what}:", ""]
            out += _table(
                ["estimator", "BM25", "BERT/neural", "gap", "sd of gap"], rows
            )
            out += [""]
    return out


def unjudged_table(groups: dict[tuple[str, str], list[dict]]) -> list[str]:
    rows = [
        [
            name,
            f"{size}%",
            _pm([r["map_unjudged"] for r in reports]),
            _pm([r["baseline_map_unjudged"] for r in reports]),
        ]
        for (name, size), reports in groups.items()
    ]
    return [
        "## MAP over the unjudged pooled documents (mean ± sd over seeds)",
        "",
        *_table(["collection", "sample", "model", "BM25 + relevance feedback"], rows),
        "",
    ]


def _mean(reports: list[dict], estimator: str, field: str) -> tuple[float, float]:
    found = _stats([r["estimators"][estimator][field] for r in reports])
    assert found is not None
    return found


def checks(groups: dict[tuple[str, str], list[dict]]) -> list[str]:
    out = ["## Done-when checks", ""]
    for (name, size), reports in groups.items():
        ma, st = (
            _mean(reports, "model_assisted", "tau"),
            _mean(reports, "statap", "tau"),
        )
        if name.startswith("dl19") and size == "10":
            runs = sorted(reports[0]["systems"]["map"]["full"])
            bm25, neural = _family(runs, BM25), _family(runs, NEURAL)
            gap = statistics.fmean(
                [x for r in reports for x in _shares(r, bm25, "model_assisted")]
            ) - statistics.fmean(
                [x for r in reports for x in _shares(r, neural, "model_assisted")]
            )
            coverage = _mean(reports, "model_assisted", "coverage")[0]
            out += [
                f"- {name} 10%: model-assisted mean tau {ma[0]:.3f} >= statAP's "
                f"{st[0]:.3f}: {_yes(ma[0] >= st[0])}",
                f"- {name} 10%: its sd {ma[1]:.3f} <= statAP's {st[1]:.3f}: "
                f"{_yes(ma[1] <= st[1])}",
                f"- {name} 10%: family gap |{gap:+.3f}| <= {FAMILY_GAP}: "
                f"{_yes(abs(gap) <= FAMILY_GAP)}",
                f"- {name} 10%: model-assisted coverage {coverage:.3f} >= "
                f"{COVERAGE}: {_yes(coverage >= COVERAGE)}",
            ]
        elif size == "10":
            out.append(
                f"- {name} 10%: model-assisted tau {ma[0]:.3f} >= statAP's "
                f"{st[0]:.3f} - {TAU_SLACK}: {_yes(ma[0] >= st[0] - TAU_SLACK)}"
            )
    return [*out, ""]


def _relative_flags(report: dict) -> dict[str, float]:
    """Run -> signed flag (+1 over-credited, -1 under-credited, 0 not flagged) of the
    bias check relative to the shift common to every run. Reports written before the
    check had a ``shift`` hold the plain ``eap - statap`` difference and its interval
    (statAP's linearised variance), from which the relative check is derived."""
    rows = report.get("bias_check") or {}
    if not rows:
        return {}
    if all("shift" in r for r in rows.values()):
        return {
            run: (1.0 if r["diff"] > 0 else -1.0) if r["flagged"] else 0.0
            for run, r in rows.items()
        }
    shift = sum(r["eap"] for r in rows.values()) / sum(
        r["statap"] for r in rows.values()
    )
    out = {}
    for run, r in rows.items():
        sd = (r["ci"][1] - r["ci"][0]) / (2 * 1.96)
        diff = r["eap"] - shift * r["statap"]
        out[run] = (1.0 if diff > 0 else -1.0) if abs(diff) > 1.96 * shift * sd else 0.0
    return out


def flag_table(groups: dict[tuple[str, str], list[dict]]) -> list[str]:
    """Runs flagged per seed by the relative bias check; for DL19 how many of them
    are BM25-family runs the model over-credits and neural runs it under-credits."""
    rows = []
    for (name, size), reports in groups.items():
        flags = [_relative_flags(r) for r in reports]
        runs = sorted(flags[0]) if flags and flags[0] else []
        cells = [
            name,
            f"{size}%",
            str(len(runs)),
            " ".join(str(sum(1 for v in f.values() if v)) for f in flags),
        ]
        if name.startswith("dl19"):
            bm25, neural = _family(runs, BM25), _family(runs, NEURAL)
            over = " ".join(str(sum(f.get(r) == 1 for r in bm25)) for f in flags)
            under = " ".join(str(sum(f.get(r) == -1 for r in neural)) for f in flags)
            others = " ".join(
                str(sum(1 for r, v in f.items() if v and r not in bm25 + neural))
                for f in flags
            )
            cells += [f"{over} (of {len(bm25)})", f"{under} (of {len(neural)})", others]
        else:
            cells += ["", "", ""]
        rows.append(cells)
    header = [
        "collection",
        "sample",
        "runs",
        "flagged per seed",
        "BM25 runs flagged over-credited",
        "neural runs flagged under-credited",
        "other runs flagged",
    ]
    return [
        "",
        "## Runs flagged by the bias check (relative to the common shift)",
        "",
        *_table(header, rows),
    ]


def _yes(flag: bool) -> str:
    return "met" if flag else "**missed**"


def main(root: Path) -> None:
    groups = _reports(root)
    if not groups:
        raise SystemExit(f"no reports under {root}")
    lines = [
        *agreement_tables(groups),
        *family_tables(groups),
        *unjudged_table(groups),
        *flag_table(groups),
        *checks(groups),
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS)
