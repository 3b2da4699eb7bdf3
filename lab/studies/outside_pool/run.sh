#!/bin/sh
# New runs outside the pool (docs/results/reusability.md, "Calibration, honest
# intervals and top-ups"): leave-one-group-out at a 10% statAP sample, pool depth
# 100, every held-out run estimated before and after a top-up of TOPUP draws per
# topic of its unpooled documents judged by the simulated assessor.
# Usage (from the repository root):
#   sh lab/studies/outside_pool/run.sh [dl19|cranfield ...]   # SEEDS="1 2 3", TOPUP=10
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/outside_pool}
OUT=${OUT:-var/results/outside_pool}
SEEDS=${SEEDS:-"1 2 3"}
TOPUP=${TOPUP:-10}
COLLECTIONS=${*:-"dl19 cranfield"}
export DEBUG=1
for c in $COLLECTIONS; do
  export DATA_DIR="$WORK/$c"
  shared_collection "$c"
  import_once "$c"
  $PY manage.py migrate -v0
  for seed in $SEEDS; do
    dir="$WORK/$c/seed$seed"
    $PY manage.py simulate --replace --collection "$c" --qrels "$SRC/qrels.txt" \
      --runs "$SRC/runs" --depth 100 --sample-size 10% --seed "$seed" \
      --relevance-level "$LEVEL" --reusability leave-one-group-out \
      --top-up "$TOPUP" --out "$dir" 2>>"$WORK/$c/simulate.log" >/dev/null
    keep_report "$dir" "$OUT/$c/leave-one-group-out-seed$seed.json"
    echo "done $c seed $seed"
  done
done
