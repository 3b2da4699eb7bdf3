#!/bin/sh
# The nugget paradigm on TREC DL 2019 passages with the 37 submitted runs: depth-10 and
# depth-100 pools, statAP samples of 10%, 5% and 20% of the mean pool size per topic,
# seeds 1-5, binary relevance at grade >= 2 (the track's convention) plus graded nDCG@10.
# Usage (from the repository root): sh lab/studies/dl19/run.sh [SIZE ...]
# Passages without text are imported as empty placeholders (prepare.py says why).
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data/trec-dl19-passage}
WORK=${WORK:-var/dl19}
OUT=${OUT:-var/results/dl19/reports}
SIZES=${*:-"10 5 20"}
SEEDS=${SEEDS:-"1 2 3 4 5"}
DEPTHS=${DEPTHS:-"10 100"}
EXTRA=${EXTRA:-}
TAG=${TAG:-}
export DATA_DIR="$WORK" DEBUG=1
mkdir -p "$WORK"
if [ ! -f "$WORK/db.sqlite3" ] || [ ! -f "$WORK/docs.jsonl.gz" ]; then
  $PY lab/studies/dl19/prepare.py "$DATA" "$WORK/docs.jsonl.gz"
  import_collection dl19 "$WORK/docs.jsonl.gz" "$DATA/topics.jsonl"
fi
for size in $SIZES; do
  for depth in $DEPTHS; do
    for seed in $SEEDS; do
      dir="$WORK/reports/d$depth-size$size-seed$seed$TAG"
      # shellcheck disable=SC2086
      $PY manage.py simulate --replace --collection dl19 --qrels "$DATA/qrels.txt" \
        --runs "$DATA/runs" --depth "$depth" --sample-size "$size%" --seed "$seed" \
        --relevance-level 2 $EXTRA --out "$dir" 2>>"$WORK/simulate.log" >/dev/null
      keep_report "$dir" "$OUT/d$depth-size$size-seed$seed$TAG/"
      echo "done d$depth size$size seed$seed$TAG"
    done
  done
done
