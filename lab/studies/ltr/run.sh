#!/bin/sh
# Reproduces docs/results/ltr.md: simulated judging of a 10% statAP sample (seeds 1-3),
# a matching job with the relevance model, export_ltr under p >= 0.5, and LambdaMART
# trained on (a) the sample, (b) sample + inferred, (c) the full qrels, by 5-fold
# cross-validation over topics. Cranfield (36 real runs, depth-100 pool) and TREC DL 2019
# passages (37 runs, depth-10 pool, relevance level 2). The same simulations give
# docs/results/graded.md (lab/studies/graded/experiment.py, run right after each
# simulation: the next one replaces the simulated assessor's judgments).
# Usage (from the repository root): sh lab/studies/ltr/run.sh [cranfield] [dl19]
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/ltr}
OUT=${OUT:-var/results/ltr/results}
SEEDS=${SEEDS:-"1 2 3"}
for c in ${*:-cranfield dl19}; do
  export DATA_DIR="$WORK/$c" DEBUG=1
  shared_collection "$c"
  import_once "$c"
  DEPTH=100
  if [ "$c" = dl19 ]; then DEPTH=10; fi
  for seed in $SEEDS; do
    $PY manage.py simulate --replace --collection "$c" --qrels "$SRC/qrels.txt" --runs "$SRC/runs" \
      --depth $DEPTH --sample-size 10% --seed "$seed" --relevance-level $LEVEL \
      --out "$WORK/$c/sim$seed" >/dev/null 2>>"$WORK/$c/simulate.log"
    # The job simulate just ran is the newest one of this database.
    job=$(newest_job)
    $PY manage.py export_ltr --job "$job" --rule p:0.5 --seed "$seed" \
      --out "$WORK/$c/ltr$seed"
    $PY -m lab.studies.graded.experiment --job "$job" --seed "$seed" --qrels "$SRC/qrels.txt" \
      --runs "$SRC/runs" --out "var/results/graded/results/$c/seed$seed.json"
    $PY lab/studies/ltr/experiment.py "$WORK/$c/ltr$seed" "$SRC/qrels.txt" \
      "$OUT/$c/seed$seed.json" --seed "$seed" --rel-level $LEVEL
  done
done
$PY lab/studies/ltr/summarize.py "$OUT"
$PY lab/studies/graded/summarize.py var/results/graded/results
