"""What AP linearised at the model's point must be off by, from the truth.

For each ``inputs.pickle`` of :mod:`lab.studies.simulate_dump`, with the p the
estimator uses (the cross-fit, tuned by the reported estimator's λ on the sample):
the mean over runs of the mean over topics of the bias
:mod:`lab.maths.ratio_linearised` derives, ``(AP - AP_p)(R - R_p)/R_p``, and of its
two factors, the model's error on AP and its relative error on R. The linearised
estimator's shift can be no smaller than this product, whatever the sample's size.

Usage: python -m lab.studies.ratio_shift INPUTS...   (Django set up, as
:mod:`lab.studies.estimator_bias`)
"""

from __future__ import annotations

import pickle
import sys

import numpy as np

from lab.maths.ratio_linearised import linearised_ap, model_only
from lab.studies.estimator_bias import pooled_truth
from nuggets_app.ir.estimator import REPORTED
from nuggets_app.ir.model_assisted import topic_samples
from nuggets_app.ir.prels import ranking_order


def model_errors(inputs) -> dict[str, float]:
    """Mean over runs of the per-topic means of ``AP_p - AP``, ``(R_p - R)/R_p`` and
    the derived bias ``(AP - AP_p)(R - R_p)/R_p`` (topics with R > 0 and R_p > 0)."""
    level, truth = inputs["level"], inputs["truth"]
    samples = topic_samples(
        inputs["prels"], inputs["crossfit"] or {}, estimator=REPORTED, level=level
    )
    per_topic = pooled_truth(inputs)
    rows = []
    for run, topics in inputs["runs"].items():
        found = []
        for qid, scores in topics.items():
            sample = samples.get(qid)
            r = sum(truth.get(qid, {}).get(d, 0) >= level for d in inputs["pool"][qid])
            r_p = sum(sample.probs.values()) if sample else 0.0
            if sample is None or r == 0 or r_p <= 0:
                continue
            got = linearised_ap(model_only(sample), ranking_order(scores))
            if got is None:
                continue
            ap, ap_p = per_topic[run][qid], got[0]
            found.append((ap_p - ap, (r_p - r) / r_p, (ap - ap_p) * (r - r_p) / r_p))
        if found:
            rows.append(np.mean(found, axis=0))
    mean = np.mean(rows, axis=0)
    return {"ap_error": mean[0], "r_error": mean[1], "bias": mean[2]}


def main(paths: list[str]) -> None:
    print("| sample | model's AP - AP | (R_p - R)/R_p | derived bias |")
    print("| --- | --- | --- | --- |")
    found = []
    for path in paths:
        with open(path, "rb") as fh:
            inputs = pickle.load(fh)
        e = model_errors(inputs)
        found.append(e)
        label = "/".join(path.rstrip("/").split("/")[-3:-1])
        print(f"| {label} | {e['ap_error']:+.4f} | {e['r_error']:+.4f} | "
              f"{e['bias']:+.4f} |")  # fmt: skip
    mean = {k: float(np.mean([e[k] for e in found])) for k in found[0]}
    print(f"| mean of {len(found)} | {mean['ap_error']:+.4f} | {mean['r_error']:+.4f} | "
          f"{mean['bias']:+.4f} |")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
