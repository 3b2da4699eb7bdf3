#!/bin/sh
# Reproduces docs/results: every shared collection with qrels, statAP samples of
# $SIZES percent of the mean pool size per topic (default 10, 5 and 20), seeds $SEEDS
# (default 1 to 5), pool depth 100, the relevance model's inference.
# Usage (from the repository root): sh lab/studies/run_all.sh [collection ...]
#   SIZES="10" SEEDS="1 2 3" sh lab/studies/run_all.sh cranfield
# Each collection gets its own embedded SQLite database under $WORK, imported once.
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/simulation}
OUT=${OUT:-var/results/reports}
SIZES=${SIZES:-"10 5 20"}
SEEDS=${SEEDS:-"1 2 3 4 5"}
COLLECTIONS=${*:-"adi cranfield medline cisi cacm lisa npl-vaswani"}
for c in $COLLECTIONS; do
  export DATA_DIR="$WORK/$c" DEBUG=1
  mkdir -p "$DATA_DIR"
  if [ "$c" = cranfield ]; then
    RUNS="--runs $DATA/cranfield/runs"   # the 36 real runs
  else
    RUNS=""
  fi
  if [ ! -f "$DATA_DIR/imported" ]; then
    import_collection "$c" "$DATA/$c/docs.jsonl.gz" "$DATA/$c/topics.jsonl"
    if [ "$c" != cranfield ]; then
      $PY manage.py make_runs --collection "$c" --out "$WORK/$c/runs" --depth 1000
    fi
    touch "$DATA_DIR/imported"
  fi
  for size in $SIZES; do
    for seed in $SEEDS; do
      # shellcheck disable=SC2086
      $PY manage.py simulate --replace --collection "$c" --qrels "$DATA/$c/qrels.txt" $RUNS \
        --depth 100 --sample-size "$size%" --seed "$seed" \
        --out "$OUT/$c/size$size-seed$seed" 2>>"$WORK/$c/simulate.log" >/dev/null
    done
  done
done
$PY lab/studies/summarize.py "$OUT" docs/results
