#!/bin/sh
# The job's own fit on TREC DL 2019 passages with and without the semantic features and
# the nugget choice (docs/results/semantic.md, section 2c): depth-100 pools, statAP
# samples of 10%, relevance at grade >= 2, seeds SEEDS (default 1-3), four variants:
#   lexical-keep     the lexical model with every family (the model before this change)
#   lexical-choice   the lexical model, nuggets kept only where they pay (the default)
#   semantic-keep    --semantic, every family
#   semantic-choice  --semantic, nuggets kept only where they pay
# Usage (from the repository root): sh lab/studies/semantic/run_job.sh
# Two databases (lexical, semantic) so the two halves can run side by side; the
# semantic one has the whole collection embedded first (manage.py embed, about 12
# minutes on two cores for the 11,044 passages with text).
set -e
export LAB=1 DEBUG=1 OPENBLAS_NUM_THREADS=1
DATA=${DATA:-../shared/data/trec-dl19-passage}
WORK=${WORK:-var/semantic/job}
OUT=${OUT:-var/results/semantic/job}
PY=${PY:-.venv/bin/python}
SEEDS=${SEEDS:-"1 2 3"}
mkdir -p "$WORK/lexical" "$WORK/semantic" "$OUT"
if [ ! -f "$WORK/lexical/db.sqlite3" ]; then
  $PY lab/studies/dl19/prepare.py "$DATA" "$WORK/docs.jsonl.gz"
  DATA_DIR="$WORK/lexical" $PY manage.py migrate -v0
  DATA_DIR="$WORK/lexical" $PY manage.py import_collection --name dl19 "$WORK/docs.jsonl.gz"
  DATA_DIR="$WORK/lexical" $PY manage.py import_topics --collection dl19 "$DATA/topics.jsonl"
  cp "$WORK/lexical/db.sqlite3" "$WORK/semantic/db.sqlite3"
  DATA_DIR="$WORK/semantic" $PY manage.py embed --collection dl19 --wait
fi
run() {  # DB TAG SEED EXTRA...
  db=$1 tag=$2 seed=$3
  shift 3
  DATA_DIR="$WORK/$db" $PY manage.py simulate --replace --collection dl19 \
    --qrels "$DATA/qrels.txt" --runs "$DATA/runs" --depth 100 --sample-size 10% \
    --seed "$seed" --relevance-level 2 "$@" --out "$OUT/$tag-seed$seed" \
    2>>"$WORK/$db/simulate.log" >/dev/null
  echo "done $tag seed$seed"
}
for seed in $SEEDS; do
  run lexical lexical-keep "$seed" --keep-nuggets
  run lexical lexical-choice "$seed"
  run semantic semantic-choice "$seed" --semantic
  run semantic semantic-keep "$seed" --semantic --keep-nuggets
done
$PY lab/studies/semantic/summarize_job.py "$OUT"
# New runs outside the pool: leave-one-group-out with the default nugget choice, with
# and without --semantic (REUSE_SEEDS, default none), summarised as outside_pool's.
for seed in ${REUSE_SEEDS:-}; do
  for db in lexical semantic; do
    flag=""
    [ "$db" = semantic ] && flag=--semantic
    dir="$OUT/reuse/$db-choice"
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    DATA_DIR="$WORK/$db" $PY manage.py simulate --replace --collection dl19 \
      --qrels "$DATA/qrels.txt" --runs "$DATA/runs" --depth 100 --sample-size 10% \
      --seed "$seed" --relevance-level 2 --reusability leave-one-group-out $flag \
      --out "$WORK/reuse-$db-seed$seed" 2>>"$WORK/$db/simulate.log" >/dev/null
    cp "$WORK/reuse-$db-seed$seed/report.json" "$dir/leave-one-group-out-seed$seed.json"
  done
done
if [ -n "${REUSE_SEEDS:-}" ]; then
  $PY lab/studies/outside_pool/summarize.py "$OUT/reuse"
fi
