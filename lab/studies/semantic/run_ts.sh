#!/bin/sh
# The semantic and combined scorers against people's nugget matches on TREC TS 2013
# and 2014, sentence and document level (docs/results/semantic.md). Needs the extra
# (requirements-semantic.txt). Each year's embeddings are kept in var/semantic/ between
# its two runs (a pseudo-document's windows are its sentences, --max-words 0), and the
# two years run side by side, each single-threaded (OPENBLAS_NUM_THREADS=1 is faster
# per CPU-second on a shared machine).
# Usage (from the repository root): sh lab/studies/semantic/run_ts.sh
set -e
. lab/studies/steps.sh
TS=${TS:-../shared/data/trec-ts-nuggets}
OUT=${OUT:-var/results/semantic}
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1
year_run() {
  year=$1
  match_ts_year "$year" --max-words 0 --embedding-cache "var/semantic/ts$year-embeddings.npz"
}
year_run 13 > var/semantic/ts13.log 2>&1 &
year_run 14 > var/semantic/ts14.log 2>&1 &
wait
