#!/bin/sh
# The semantic and combined scorers against people's nugget matches on TREC TS 2013
# and 2014, sentence and document level (docs/results/semantic.md). Needs the extra
# (requirements-semantic.txt). Embeddings are kept in $CACHE between the four runs
# (a pseudo-document's windows are its sentences, --max-words 0).
# Usage (from the repository root): sh docs/results/semantic/run_ts.sh
set -e
TS=${TS:-../shared/data/trec-ts-nuggets}
OUT=${OUT:-docs/results/semantic}
PY=${PY:-.venv/bin/python}
CACHE=${CACHE:-var/semantic/ts-embeddings.npz}
for year in 13 14; do
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/sentences.jsonl.gz" --gold "$TS/matches.jsonl.gz" --level sentence \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 --max-words 0 \
    --embedding-cache "$CACHE" \
    --title "TREC TS 20$year, sentences" --out "$OUT/ts$year-sentence"
  $PY manage.py evaluate_matcher --nuggets "$TS/nuggets.jsonl" \
    --units "$TS/docs.jsonl.gz" --gold "$TS/doc_matches.jsonl.gz" --level document \
    --qid-prefix "TS$year." --k 2 3 --lam 0.3 0.5 0.8 --max-words 0 \
    --embedding-cache "$CACHE" \
    --title "TREC TS 20$year, pseudo-documents" --out "$OUT/ts$year-document"
done
