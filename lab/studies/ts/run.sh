#!/bin/sh
# The simulated assessor with the TS assessors' own nuggets (--nuggets human) against
# the sentence heuristic (--nuggets simulated) on the TREC TS pseudo-collection:
# generated runs (make_runs), depth-100 pool, 10% statAP samples, seeds 1-3,
# relevance at grade >= 1. Usage (from the repository root): sh lab/studies/ts/run.sh
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data/trec-ts-nuggets}
WORK=${WORK:-var/ts}
OUT=${OUT:-var/results/ts/reports}
SEEDS=${SEEDS:-"1 2 3"}
export DATA_DIR="$WORK" DEBUG=1
mkdir -p "$WORK"
if [ ! -f "$WORK/db.sqlite3" ]; then
  import_collection ts "$DATA/docs.jsonl.gz" "$DATA/topics.jsonl"
  $PY manage.py make_runs --collection ts --out "$WORK/runs" --depth 1000
  $PY lab/studies/ts/bank.py "$DATA" "$WORK/ts-matches.jsonl"
  $PY manage.py import_nuggets "$WORK/ts-matches.jsonl" --collection ts --name ts-matches
fi
for seed in $SEEDS; do
  for nuggets in simulated human; do
    dir="$WORK/reports/$nuggets-seed$seed"
    $PY manage.py simulate --replace --collection ts --qrels "$DATA/qrels.txt" --depth 100 \
      --sample-size 10% --seed "$seed" --nuggets "$nuggets" --out "$dir" \
      2>>"$WORK/simulate.log" >/dev/null
    keep_report "$dir" "$OUT/$nuggets-seed$seed/"
    echo "done $nuggets seed $seed"
  done
done
