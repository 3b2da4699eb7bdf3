"""What the experiments that rank systems share: the submitted runs they score, the
Kendall's tau of each qrels' ranking of the runs against the full qrels', and the
report they write.

``means`` maps a qrels variant (``"full"`` among them) to each run's mean measures.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from scipy.stats import kendalltau

Run = dict[str, dict[str, float]]
Means = dict[str, dict[str, dict[str, float]]]


def read_runs(folder: Path, qids: set[str]) -> dict[str, Run]:
    """The ``.run`` and ``.run.gz`` files of ``folder`` by name: the score of each
    document per topic, the topics of ``qids`` only."""
    runs: dict[str, Run] = {}
    for path in sorted(folder.iterdir()):
        if not path.name.endswith((".run", ".run.gz")):
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        run: Run = {}
        with opener(path, "rt") as fh:
            for line in fh:
                q, _, d, _, score, _ = line.split()
                if q in qids:
                    run.setdefault(q, {})[d] = float(score)
        runs[path.name.removesuffix(".gz").removesuffix(".run")] = run
    return runs


def taus_against_full(
    means: Means, runs: list[str], measures: list[str]
) -> dict[str, dict[str, float]]:
    """Per variant other than ``"full"`` and measure, Kendall's tau of its ranking of
    ``runs`` against the full qrels' ranking."""
    return {
        variant: {
            m: float(
                kendalltau(
                    [means["full"][r][m] for r in runs],
                    [per_run[r][m] for r in runs],
                ).statistic
            )
            for m in measures
        }
        for variant, per_run in means.items()
        if variant != "full"
    }


def write_report(
    path: Path, report: dict[str, Any], taus: dict[str, dict[str, float]]
) -> None:
    """The report as JSON in ``path``, then one line of taus per variant on stdout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    for variant, values in taus.items():
        print(variant, " ".join(f"tau {m}={v:.3f}" for m, v in values.items()))
