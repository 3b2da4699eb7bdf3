#!/bin/sh
# The semantic and combined scorers against people's nugget matches on TREC TS 2013
# and 2014, sentence and document level (docs/results/semantic.md). Needs the extra
# (requirements-semantic.txt). Each year's embeddings are kept in var/semantic/ between
# its two runs (a pseudo-document's windows are its sentences, --max-words 0), and the
# two years run side by side, each single-threaded (OPENBLAS_NUM_THREADS=1 is faster
# per CPU-second on a shared machine).
# Usage (from the repository root): sh lab/studies/semantic/run_ts.sh
set -e
# The lab's commands (simulate, evaluate_matcher, export_ltr) are installed with LAB=1.
export LAB=1
TS=${TS:-../shared/data/trec-ts-nuggets}
OUT=${OUT:-var/results/semantic}
PY=${PY:-.venv/bin/python}
export OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1
year_run() {
  year=$1
  cache=var/semantic/ts$year-embeddings.npz
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/sentences.jsonl.gz" --gold "$TS/matches.jsonl.gz" --level sentence \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 --max-words 0 \
    --embedding-cache "$cache" \
    --title "TREC TS 20$year, sentences" --out "$OUT/ts$year-sentence"
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/docs.jsonl.gz" --gold "$TS/doc_matches.jsonl.gz" --level document \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 --max-words 0 \
    --embedding-cache "$cache" \
    --title "TREC TS 20$year, pseudo-documents" --out "$OUT/ts$year-document"
}
year_run 13 > var/semantic/ts13.log 2>&1 &
year_run 14 > var/semantic/ts14.log 2>&1 &
wait
