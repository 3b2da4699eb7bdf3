#!/bin/sh
# Reproduces docs/results/fitted_rule.md: every shared collection with qrels, a statAP
# sample of 10% of the mean pool size per topic, seed 1, pool depth 100, inferred with
# the hand-picked rule threshold:0.5 and with the fitted rules fit:f1 and
# fit:f1:per-topic (best F1 on the held-out judged documents), on the same database.
# Usage (from the repository root): sh lab/studies/run_fitted.sh [collection ...]
# Each collection gets its own embedded SQLite database under $WORK; a database left
# there by an earlier run (or by run_all.sh, copied over) is reused as is.
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/simulation-fit}
OUT=${OUT:-var/results/fitted}
RULES=${RULES:-"threshold:0.5 fit:f1 fit:f1:per-topic"}
COLLECTIONS=${*:-"adi cranfield medline cisi cacm lisa npl-vaswani"}
for c in $COLLECTIONS; do
  export DATA_DIR="$WORK/$c" DEBUG=1
  mkdir -p "$DATA_DIR"
  if [ ! -f "$DATA_DIR/db.sqlite3" ]; then
    import_collection "$c" "$DATA/$c/docs.jsonl.gz" "$DATA/$c/topics.jsonl"
    if [ "$c" != cranfield ]; then
      $PY manage.py make_runs --collection "$c" --out "$WORK/$c/runs" --depth 1000
    fi
  fi
  $PY manage.py migrate -v0
  RUNS=""
  if [ "$c" = cranfield ]; then RUNS="--runs $DATA/cranfield/runs"; fi  # 36 real runs
  for rule in $RULES; do
    name=$(echo "$rule" | tr ':' '-')
    # shellcheck disable=SC2086
    $PY manage.py simulate --replace --inference paper --collection "$c" --qrels "$DATA/$c/qrels.txt" $RUNS \
      --depth 100 --sample-size 10% --seed 1 --rule "$rule" \
      --out "$OUT/$c/size10-seed1-$name" 2>>"$WORK/$c/simulate.log"
  done
done
