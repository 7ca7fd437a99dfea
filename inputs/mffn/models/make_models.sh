#!/bin/bash
# Rebuild the shipped MeshfreeFlowNet of inputs/mffn/models (README.md there): the fine ensemble, then
# training with the held-out evaluation.
#   inputs/mffn/models/make_models.sh [WORKDIR]     (default build/mffn_models; ~15 min on a shared core)
# Steps whose output exists are skipped, so an interrupted run resumes. Copy mffn_rb_superres.h5 into
# inputs/mffn/models/ yourself after reading the evaluation at the end of train.log.
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
W=${1:-$root/build/mffn_models}
mkdir -p "$W" && cd "$W"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# 6 training members (seeds from 7), 2 held-out members (seeds from 11): Ra = 1e5, 128 x 32, t = 0 .. 4
[ -f rb_fine.h5 ] || "$SURGE" ensemble "$root/inputs/mffn/ensemble_fine.yaml" -ensemble_output rb_fine > ensemble.log
[ -f rb_fine_valid.h5 ] || "$SURGE" ensemble "$root/inputs/mffn/ensemble_fine.yaml" -ensemble_output rb_fine_valid \
  -ensemble_seed 11 -ensemble_members 2 > ensemble_valid.log
[ -f mffn_rb_superres.h5 ] || "$SURGE" train "$root/inputs/mffn/superres_train.yaml" -mffn_valid_data rb_fine_valid.h5 > train.log
grep -A 12 "held-out" train.log
