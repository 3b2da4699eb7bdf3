#!/bin/sh
# What the nuggets add (docs/results/nuggets.md): the simulation with the default model
# (arm "with") and without the nugget features (--ablate nuggets, arm "nonug"), or with
# the nugget-level evidence (arm "ev": only in a checkout of commit a15a9bf, the
# features were dropped after), on the same pools, samples and judgments.
# Reports: $OUT/<setting>/size<P>-seed<S>-<arm>/.
# Usage (from the repository root, after the imports of dl19/run.sh, run_all.sh,
# ts/run.sh and reusability/run.sh): ARMS="with nonug" SEEDS="1 2" sh lab/studies/nuggets/run.sh dl19-5
# Settings: dl19-5 dl19-10 <collection>-10 ts-10 dl19-reuse cranfield-reuse
set -e
. lab/studies/steps.sh
DATA=${DATA:-../shared/data}
OUT=${OUT:-var/nuggets}
SEEDS=${SEEDS:-"1 2 3 4 5"}
ARMS=${ARMS:-"with nonug"}
SETTINGS=${*:-"dl19-5 dl19-10 dl19-reuse"}
export DEBUG=1
mkdir -p "$OUT"
for setting in $SETTINGS; do
  c=${setting%-*}; kind=${setting##*-}; size=$kind; extra=""
  case $c in
    dl19) SRC="$DATA/trec-dl19-passage"; ARGS="--runs $SRC/runs --relevance-level 2"
          export DATA_DIR=var/dl19 ;;
    cranfield) SRC="$DATA/$c"; ARGS="--runs $SRC/runs"; export DATA_DIR=var/simulation/$c ;;
    ts) SRC="$DATA/trec-ts-nuggets"; ARGS="--nuggets human"; export DATA_DIR=var/ts ;;
    *) SRC="$DATA/$c"; ARGS=""; export DATA_DIR=var/simulation/$c ;;
  esac
  if [ "$kind" = reuse ]; then
    size=10; extra="--reusability leave-one-group-out"; export DATA_DIR=var/reusability/$c
  fi
  for seed in $SEEDS; do
    for arm in $ARMS; do
      case $arm in with) FLAG="" ;; nonug) FLAG="--ablate nuggets" ;; ev) FLAG="--nugget-evidence" ;; esac
      dir="$OUT/$setting/size$size-seed$seed-$arm"
      [ -f "$dir/report.json" ] && continue
      # shellcheck disable=SC2086
      $PY manage.py simulate --replace --collection "$c" --qrels "$SRC/qrels.txt" $ARGS \
        --depth 100 --sample-size "$size%" --seed "$seed" $extra $FLAG --out "$dir" \
        2>>"$OUT/simulate.log" >/dev/null
      echo "done $setting seed $seed $arm"
    done
  done
done
$PY lab/studies/nuggets/summarize.py "$OUT"
