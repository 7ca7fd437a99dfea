#!/bin/bash
# Rebuild the shipped models inputs/podlstm/models/sst5_podlstm.h5, rb4_podlstm.h5 and (RB1E7=1) rb1e7_podlstm.h5 (model cards:
# models/README.md):
#   inputs/podlstm/make_models.sh [WORKDIR]     (default build/podlstm_models; ~5 min for sst5 and
#                                                ~15 min for rb4 on two loaded cores)
# Each data set, then its search on 2 ranks; a step whose output exists is skipped, and a search
# resumes from its log (WORKDIR/sst5_train.search, WORKDIR/rb4.search) after an interruption. Copy the
# results into inputs/podlstm/models/ yourself after reading their test scores.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
W=${1:-$root/build/podlstm_models}
mkdir -p "$W" && cd "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
[ -f sst_weekly_5deg.h5 ] || "$SURGE" ensemble "$root/inputs/sst/ensemble_weekly_5deg.yaml" > ensemble.log
[ -f sst5_podlstm.h5 ] || mpiexec -n 2 --oversubscribe "$SURGE" train "$root/inputs/podlstm/sst5_train.yaml" > train.log
grep -A9 "test RMSE" train.log
[ -f rb_podlstm_data.h5 ] || "$SURGE" ensemble "$root/inputs/podlstm/rb_ensemble.yaml" > rb_ensemble.log
[ -f rb4_podlstm.h5 ] || mpiexec -n 2 --oversubscribe "$SURGE" train "$root/inputs/podlstm/rb_train.yaml" -podlstm_fields p,b,u,w \
  -train_output rb4_podlstm -podlstm_prefix rb4 \
  -podlstm_evaluations 44 -podlstm_population 16 -podlstm_units_max 96 -podlstm_epochs 150 -podlstm_patience 20 > rb_train.log
grep -A7 "test RMSE" rb_train.log
# the Ra = 1e7 model (rb1e7_podlstm.h5): only with RB1E7=1 (the data is 525 MB and takes ~16 min, the search ~20 min)
if [ "${RB1E7:-0}" = 1 ]; then
  [ -f rb1e7_podlstm_data.h5 ] || "$SURGE" ensemble "$root/inputs/podlstm/rb1e7_ensemble.yaml" > rb1e7_ensemble.log
  [ -f rb1e7_podlstm.h5 ] || "$SURGE" train "$root/inputs/podlstm/rb1e7_train.yaml" -podlstm_fields p,b,u,w -train_output rb1e7_podlstm > rb1e7_train.log
  grep -A7 "test RMSE" rb1e7_train.log
fi
