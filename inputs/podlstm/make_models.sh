#!/bin/bash
# Rebuild the shipped model inputs/podlstm/models/sst5_podlstm.h5 (model card: models/README.md):
#   inputs/podlstm/make_models.sh [WORKDIR]     (default build/podlstm_models; ~5 min on two cores)
# The data set, then the search on 2 ranks; a step whose output exists is skipped, and the search
# resumes from its log (WORKDIR/sst5_train.search) after an interruption. Copy the result into
# inputs/podlstm/models/ yourself after reading its test scores.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
W=${1:-$root/build/podlstm_models}
mkdir -p "$W" && cd "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
[ -f sst_weekly_5deg.h5 ] || "$SURGE" ensemble "$root/inputs/sst/ensemble_weekly_5deg.yaml" > ensemble.log
[ -f sst5_podlstm.h5 ] || mpiexec -n 2 --oversubscribe "$SURGE" train "$root/inputs/podlstm/sst5_train.yaml" > train.log
grep -A9 "test RMSE" train.log
