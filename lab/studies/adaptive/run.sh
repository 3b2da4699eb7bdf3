#!/bin/sh
# Adaptive rounds against one-shot statAP samples at equal numbers of judgments
# (docs/results/adaptive.md): per collection and seed, three arms, pool depth 100,
# the relevance model's inference:
#   one10  one-shot statAP sample of 10% of the mean pool size per topic
#   rounds5  $ROUNDS rounds, 5% in total: statAP, then model-guided unbiased draws
#   rounds3  three rounds, 5% in total
#   rounds4  four rounds, 5% in total
#   top5   $ROUNDS rounds, 5% in total: statAP, then the most probable documents
#          (HiCAL-style, biased; for reference)
# DL19 passages use grade >= 2 as relevant (the track's convention) and its 37 runs;
# cranfield its 36 real runs; the other collections the runs of make_runs.
# Usage (from the repository root, after the imports of run_all.sh and dl19/run.sh):
#   SEEDS="1 2" sh lab/studies/adaptive/run.sh [collection ...]
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
WORK=${WORK:-var/simulation}
OUT=${OUT:-var/results/adaptive/reports}
SEEDS=${SEEDS:-"1 2 3 4 5"}
ROUNDS=${ROUNDS:-2}
ARMS=${ARMS:-"one10 rounds5 top5"}
COLLECTIONS=${*:-"dl19 medline cisi cacm adi lisa npl-vaswani cranfield"}
export DEBUG=1
for seed in $SEEDS; do
  for c in $COLLECTIONS; do
    export DATA_DIR="$WORK/$c"
    case $c in
      dl19) QRELS="$DATA/trec-dl19-passage/qrels.txt"
            RUNS="--runs $DATA/trec-dl19-passage/runs"; LEVEL=2 ;;
      cranfield) QRELS="$DATA/$c/qrels.txt"; RUNS="--runs $DATA/$c/runs"; LEVEL=1 ;;
      *) QRELS="$DATA/$c/qrels.txt"; RUNS=""; LEVEL=1 ;;
    esac
    for arm in $ARMS; do
      case $arm in
        one10) ARGS="--sample-size 10%" ;;
        one5) ARGS="--sample-size 5%" ;;
        rounds5) ARGS="--sample-size 5% --rounds $ROUNDS" ;;
        rounds3) ARGS="--sample-size 5% --rounds 3" ;;
        rounds4) ARGS="--sample-size 5% --rounds 4" ;;
        top5) ARGS="--sample-size 5% --rounds $ROUNDS --round-design top" ;;
      esac
      dir="$OUT/$c/$arm-seed$seed"
      [ -f "$dir/report.json" ] && continue
      # shellcheck disable=SC2086
      $PY manage.py simulate --replace --collection "$c" --qrels "$QRELS" $RUNS --depth 100 \
        --relevance-level $LEVEL --seed "$seed" $ARGS --out "$WORK/$c/adaptive/$arm-seed$seed" \
        2>>"$WORK/$c/adaptive.log" >/dev/null
      keep_report "$WORK/$c/adaptive/$arm-seed$seed" "$dir/"
      echo "done $c $arm seed$seed"
    done
  done
done
