#!/bin/sh
# Judges as evidence of the relevance model on TREC DL 2019 passages (docs/results/
# judges-evidence.md): depth-10 pools, statAP samples of 10%, grade >= 2, per seed one
# simulation without a judge and one with each judge drawn from a measured LLMJudge
# table. Usage (from the repository root): sh lab/studies/judges/evidence.sh [SEEDS]
# The DL19 database of lab/studies/dl19/run.sh is used (imported there on first run).
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data/trec-dl19-passage}
JUDGES=${JUDGES:-../shared/data/llmjudge-dl23}
WORK=${WORK:-var/dl19}
TABLES=${TABLES:-var/judge-tables}
OUT=${OUT:-var/judges-ev/reports}
SEEDS=${*:-$(seq 1 20)}
export DATA_DIR="$WORK" DEBUG=1
$PY lab/studies/judges/judge_tables.py "$JUDGES" "$TABLES" \
  h2oloo-fewself TREMA-4prompts TREMA-rubric0
simulate() {
  seed=$1; tag=$2; shift 2
  $PY manage.py simulate --replace --collection dl19 --qrels "$DATA/qrels.txt" \
    --runs "$DATA/runs" --depth 10 --sample-size 10% --seed "$seed" \
    --relevance-level 2 "$@" --out "$OUT/$tag-seed$seed" >/dev/null
  echo "done $tag seed$seed"
}
for seed in $SEEDS; do
  simulate "$seed" none
  simulate "$seed" best --judge-table "h2oloo-fewself=$TABLES/h2oloo-fewself.json"
  simulate "$seed" over --judge-table "TREMA-4prompts=$TABLES/TREMA-4prompts.json"
  simulate "$seed" under --judge-table "TREMA-rubric0=$TABLES/TREMA-rubric0.json"
done
$PY lab/studies/judges/summarize_evidence.py "$OUT"
