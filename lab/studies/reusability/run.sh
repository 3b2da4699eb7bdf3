#!/bin/sh
# Reusability (docs/results/reusability.md): every group of runs (or every run) held
# out of the pool, the collection built from the others at a statAP sample of 10% of
# the mean pool size, the held-out runs evaluated as new. DL19 (its 37 runs, binary
# relevance at grade >= 2) and Cranfield (its 36 real runs), pool depth 100.
# Usage (from the repository root): sh lab/studies/reusability/run.sh [dl19|cranfield ...]
#   SEEDS="1" MODES="leave-one-run-out" sh lab/studies/reusability/run.sh cranfield
# EXTRA: more options of simulate (outside_pool/run.sh passes its top-up).
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/reusability}
OUT=${OUT:-var/results/reusability}
SEEDS=${SEEDS:-"1 2 3"}
MODES=${MODES:-"leave-one-group-out"}
EXTRA=${EXTRA:-}
COLLECTIONS=${*:-"dl19 cranfield"}
export DEBUG=1
for c in $COLLECTIONS; do
  export DATA_DIR="$WORK/$c"
  shared_collection "$c"
  import_once "$c"
  $PY manage.py migrate -v0
  for mode in $MODES; do
    for seed in $SEEDS; do
      dir="$WORK/$c/$mode-seed$seed"
      # shellcheck disable=SC2086
      $PY manage.py simulate --replace --collection "$c" --qrels "$SRC/qrels.txt" \
        --runs "$SRC/runs" --depth 100 --sample-size 10% --seed "$seed" \
        --relevance-level "$LEVEL" --reusability "$mode" $EXTRA --out "$dir" \
        2>>"$WORK/$c/simulate.log" >/dev/null
      keep_report "$dir" "$OUT/$c/$mode-seed$seed.json"
      echo "done $c $mode seed $seed"
    done
  done
done
