"""The paper's learning-to-rank experiment on an ``export_ltr`` directory.

LightGBM's LambdaMART is trained, by cross-validation over the export's topic folds,
(a) on the judged sample only (lines marked ``person``), (b) on the sample plus the
inferred judgments (every line) and, as the ceiling, (c) on the full qrels' grades of
the same documents (0 where the qrels say nothing), then ranks each test topic's exported documents; the
rankings are scored with ir_measures against the full qrels (nDCG@10, AP with
``--rel-level``, 2 for TREC DL). BM25 on the
text (feature 1) ranks the same documents as a reference. Features: the eight text
features of ``lab.maths.ltr.TEXT_FEATURES`` (the matcher score and model p are
left out: the inferred labels are a function of them).

Usage: python lab/studies/ltr/experiment.py EXPORT_DIR FULL_QRELS OUT.json [--seed S]
       [--rel-level L]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import ir_measures
import lightgbm as lgb
import numpy as np
from ir_measures import AP, nDCG
from sklearn.datasets import load_svmlight_file

TEXT_COLUMNS = 8


def read_export(path: Path) -> list[tuple[int, str, np.ndarray, str, str]]:
    """(rel, qid, features, docno, source) per line of an export file: the LETOR
    columns through scikit-learn's reader, docno and source from the comment."""
    x, y, qid = load_svmlight_file(str(path), query_id=True)
    dense = x.toarray()
    comments = [
        line.partition(" # ")[2].split()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    return [
        (int(y[i]), str(qid[i]), dense[i], comments[i][0], comments[i][1])
        for i in range(len(comments))
    ]


def train(rows, seed: int) -> lgb.LGBMRanker:
    rows = sorted(rows, key=lambda r: r[1])  # contiguous topics
    groups: dict[str, int] = {}
    for r in rows:
        groups[r[1]] = groups.get(r[1], 0) + 1
    x = np.array([r[2][:TEXT_COLUMNS] for r in rows])
    y = np.array([r[0] for r in rows])
    model = lgb.LGBMRanker(
        objective="lambdarank",
        n_estimators=200,
        learning_rate=0.05,
        num_leaves=15,
        min_child_samples=5,
        random_state=seed,
        n_jobs=1,
        deterministic=True,
        force_row_wise=True,
        verbose=-1,
    )
    model.fit(x, y, group=[groups[q] for q in sorted(groups)])
    return model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("export", type=Path)
    parser.add_argument("qrels", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rel-level", type=int, default=1)
    args = parser.parse_args()
    measures = [nDCG @ 10, AP(rel=args.rel_level)]
    provenance = json.loads((args.export / "provenance.json").read_text())
    numbers = {str(v): k for k, v in provenance["qid_numbers"].items()}
    rows = read_export(args.export / "all.txt")
    fold_of = {q: provenance["fold_of_qid"][numbers[q]] for q in {r[1] for r in rows}}
    truth = list(ir_measures.read_trec_qrels(str(args.qrels)))
    grade = {(q.query_id, q.doc_id): q.relevance for q in truth}
    full = [(max(grade.get((numbers[r[1]], r[3]), 0), 0), *r[1:]) for r in rows]
    runs: dict[str, list] = {
        "sample": [],
        "sample+inferred": [],
        "full qrels": [],
        "bm25": [],
    }
    for fold in range(1, provenance["folds"] + 1):
        test = [r for r in rows if fold_of[r[1]] == fold]
        rest = [r for r in rows if fold_of[r[1]] != fold]
        models = {
            "sample": train([r for r in rest if r[4] == "person"], args.seed),
            "sample+inferred": train(rest, args.seed),
            "full qrels": train([r for r in full if fold_of[r[1]] != fold], args.seed),
        }
        x = np.array([r[2][:TEXT_COLUMNS] for r in test])
        for name, model in models.items():
            for r, s in zip(test, model.predict(x), strict=True):
                runs[name].append(ir_measures.ScoredDoc(numbers[r[1]], r[3], float(s)))
        for r in test:
            runs["bm25"].append(ir_measures.ScoredDoc(numbers[r[1]], r[3], r[2][0]))
    qids = {numbers[r[1]] for r in rows}
    truth = [q for q in truth if q.query_id in qids]
    result: dict[str, dict[str, float]] = {}
    per_topic: dict[str, dict[str, dict[str, float]]] = {}
    for name, run in runs.items():
        result[name] = {
            str(m): v
            for m, v in ir_measures.calc_aggregate(measures, truth, run).items()
        }
        per_topic[name] = {}
        for metric in ir_measures.iter_calc(measures, truth, run):
            per_topic[name].setdefault(str(metric.measure), {})[metric.query_id] = (
                metric.value
            )
    counts = provenance["counts"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "export": str(args.export),
                "seed": args.seed,
                "counts": counts,
                "topics": len(qids),
                "mean": result,
                "per_topic": per_topic,
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    for name, values in result.items():
        print(name, " ".join(f"{m}={v:.4f}" for m, v in values.items()))


if __name__ == "__main__":
    main()
