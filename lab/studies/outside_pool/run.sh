#!/bin/sh
# New runs outside the pool (docs/results/reusability.md, "Calibration, honest
# intervals and top-ups"): leave-one-group-out at a 10% statAP sample, pool depth
# 100, every held-out run estimated before and after a top-up of TOPUP draws per
# topic of its unpooled documents judged by the simulated assessor. The steps are
# reusability/run.sh's, with the top-up and folders of its own.
# Usage (from the repository root):
#   sh lab/studies/outside_pool/run.sh [dl19|cranfield ...]   # SEEDS="1 2 3", TOPUP=10
set -e
WORK=${WORK:-var/outside_pool} OUT=${OUT:-var/results/outside_pool} \
  MODES=leave-one-group-out EXTRA="--top-up ${TOPUP:-10}" sh lab/studies/reusability/run.sh "$@"
