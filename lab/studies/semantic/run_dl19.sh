#!/bin/sh
# DL19 passages at 10% (depth-100 pools, seeds 1-5) with and without the relevance
# model's semantic features (docs/results/semantic.md). The first semantic run embeds
# the collection's passages once (kept in $WORK's database for the others).
# Usage (from the repository root): sh lab/studies/semantic/run_dl19.sh
set -e
DATA=${DATA:-../shared/data/trec-dl19-passage}
WORK=${WORK:-var/semantic/dl19}
OUT=${OUT:-var/results/semantic}
PY=${PY:-.venv/bin/python}
export DATA WORK PY DEPTHS=100 SEEDS="${SEEDS:-1 2 3 4 5}" OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1
EXTRA=--semantic OUT="$OUT/dl19-semantic/dl19" sh lab/studies/dl19/run.sh 10
EXTRA= OUT="$OUT/dl19-lexical/dl19" sh lab/studies/dl19/run.sh 10
$PY lab/studies/fairness/summarize.py "$OUT/dl19-lexical" > docs/results/semantic/dl19-lexical.md
$PY lab/studies/fairness/summarize.py "$OUT/dl19-semantic" > docs/results/semantic/dl19-semantic.md
