#!/bin/sh
# Reproduces docs/results: every shared collection with qrels, statAP samples of 5%, 10%
# and 20% of the mean pool size per topic, seeds 1 and 2, pool depth 100.
# Usage (from the repository root): sh docs/results/run_all.sh [collection ...]
# Each collection gets its own embedded SQLite database under $WORK.
set -e
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/simulation}
OUT=${OUT:-docs/results/reports}
PY=${PY:-.venv/bin/python}
COLLECTIONS=${*:-"adi cranfield medline cisi cacm lisa npl-vaswani"}
for c in $COLLECTIONS; do
  export DATA_DIR="$WORK/$c" DEBUG=1
  mkdir -p "$DATA_DIR"
  $PY manage.py migrate -v0
  $PY manage.py import_collection --name "$c" "$DATA/$c/docs.jsonl.gz"
  $PY manage.py import_topics --collection "$c" "$DATA/$c/topics.jsonl"
  if [ "$c" = cranfield ]; then
    RUNS="--runs $DATA/cranfield/runs"   # the 36 real runs
  else
    RUNS=""
    $PY manage.py make_runs --collection "$c" --out "$WORK/$c/runs" --depth 1000
  fi
  for size in 5 10 20; do
    for seed in 1 2; do
      # shellcheck disable=SC2086
      $PY manage.py simulate --collection "$c" --qrels "$DATA/$c/qrels.txt" $RUNS \
        --depth 100 --sample-size "$size%" --seed "$seed" \
        --out "$OUT/$c/size$size-seed$seed" 2>>"$WORK/$c/simulate.log"
    done
  done
done
$PY docs/results/summarize.py "$OUT" docs/results
