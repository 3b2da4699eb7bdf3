#!/bin/sh
# The matcher against people's nugget matches on TREC TS 2013 and 2014, at sentence
# and at document level (docs/results/human-nuggets.md).
# Usage (from the repository root): sh lab/studies/human_nuggets.sh
set -e
# The lab's commands (simulate, evaluate_matcher, export_ltr) are installed with LAB=1.
export LAB=1
TS=${TS:-../shared/data/trec-ts-nuggets}
OUT=${OUT:-var/results/human-nuggets}
PY=${PY:-.venv/bin/python}
for year in 13 14; do
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/sentences.jsonl.gz" --gold "$TS/matches.jsonl.gz" --level sentence \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 \
    --title "TREC TS 20$year, sentences" --out "$OUT/ts$year-sentence"
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/docs.jsonl.gz" --gold "$TS/doc_matches.jsonl.gz" --level document \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 \
    --title "TREC TS 20$year, pseudo-documents" --out "$OUT/ts$year-document"
done
