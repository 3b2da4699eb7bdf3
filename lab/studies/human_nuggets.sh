#!/bin/sh
# The matcher against people's nugget matches on TREC TS 2013 and 2014, at sentence
# and at document level (docs/results/human-nuggets.md).
# Usage (from the repository root): sh lab/studies/human_nuggets.sh
set -e
. lab/studies/steps.sh
TS=${TS:-../shared/data/trec-ts-nuggets}
OUT=${OUT:-var/results/human-nuggets}
for year in 13 14; do
  match_ts_year "$year"
done
