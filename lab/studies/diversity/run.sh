#!/bin/sh
# Reproduces docs/results/diversity.md: TREC TS nuggets as subtopics. The TS
# pseudo-collection with its generated runs (make_runs), the assessors' matches as a
# nugget bank whose every nugget is its own aspect, then per seed a simulation with the
# people's nuggets (depth-100 pool, 10% statAP sample, relevance at grade >= 1) in its
# own database copy, and experiment.py scoring the runs by alpha-nDCG@10, ERR-IA@10 and
# subtopic recall@10 under the full, the sample's and sample + inferred subtopic qrels.
# The same simulations give docs/results/graded.md its TS section (graded/experiment.py:
# nDCG under the importance-graded qrels).
# Usage (from the repository root): sh lab/studies/diversity/run.sh
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data/trec-ts-nuggets}
WORK=${WORK:-var/diversity}
OUT=${OUT:-var/results/diversity/results}
SEEDS=${SEEDS:-"1 2 3 4 5"}
export DEBUG=1
mkdir -p "$WORK/base" "$OUT"
if [ ! -f "$WORK/base/imported" ]; then
  export DATA_DIR="$WORK/base"
  import_collection ts "$DATA/docs.jsonl.gz" "$DATA/topics.jsonl"
  $PY manage.py make_runs --collection ts --out "$WORK/runs" --depth 1000
  $PY lab/studies/ts/bank.py "$DATA" "$WORK/ts-aspects.jsonl" --aspects
  $PY manage.py import_nuggets "$WORK/ts-aspects.jsonl" --collection ts --name ts-aspects
  touch "$WORK/base/imported"
fi
for seed in $SEEDS; do
  # Each seed in its own copy of the database: a simulation replaces the simulated
  # assessor's judgments, and the copy keeps them for experiment.py.
  export DATA_DIR="$WORK/seed$seed"
  if [ ! -f "$DATA_DIR/simulated" ]; then
    rm -rf "$DATA_DIR" && mkdir -p "$DATA_DIR" && cp "$WORK/base/db.sqlite3" "$DATA_DIR/"
    $PY manage.py simulate --replace --collection ts --qrels "$DATA/qrels.txt" --depth 100 \
      --sample-size 10% --seed "$seed" --nuggets human --out "$DATA_DIR/sim" \
      >/dev/null 2>>"$WORK/simulate.log"
    touch "$DATA_DIR/simulated"
  fi
  job=$(newest_job)
  $PY -m lab.studies.diversity.experiment --job "$job" --seed "$seed" \
    --matches "$DATA/doc_matches.jsonl.gz" --runs "$WORK/runs" --out "$OUT/seed$seed.json"
  $PY -m lab.studies.graded.experiment --job "$job" --seed "$seed" --qrels "$DATA/qrels.txt" \
    --runs "$WORK/runs" --out "var/results/graded/results/ts/seed$seed.json"
done
$PY lab/studies/diversity/summarize.py "$OUT"
$PY lab/studies/graded/summarize.py var/results/graded/results
