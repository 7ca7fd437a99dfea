#!/bin/bash
# Rebuild the shipped models of inputs/swap/models (README.md there): data by ensembles, then training.
#   inputs/swap/make_models.sh [WORKDIR]     (default build/swap_models; about 30 min on two cores)
# Steps whose output exists are skipped, so an interrupted run resumes. Copy the results into
# inputs/swap/models/ yourself after checking them with `surge model test`.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
W=${1:-$root/build/swap_models}
mkdir -p "$W" && cd "$W"
export OPENBLAS_NUM_THREADS=1
# tight-binding Si: 6 training members, 2 validation members (another seed), four models (seeds 1-4)
[ -f si_tb_ensemble.h5 ] || "$SURGE" ensemble "$root/inputs/md/si_tb_ensemble.yaml" > si_ensemble.log
[ -f si_tb_valid.h5 ] || "$SURGE" ensemble "$root/inputs/md/si_tb_ensemble.yaml" -ensemble_seed 9 -ensemble_members 2 \
  -ensemble_output si_tb_valid > si_ensemble_valid.log
for s in 1 2 3 4; do
  [ -f si_dp$s.h5 ] || "$SURGE" train "$root/inputs/swap/si_dp.yaml" -deepmd_seed $s -deepmd_numb_steps 60000 \
    -deepmd_decay_steps 2000 -deepmd_valid_data si_tb_valid.h5 -deepmd_disp_freq 5000 -train_output si_dp$s \
    -deepmd_lcurve si_dp$s.lcurve > si_train$s.log
  "$SURGE" model test si_dp$s.h5 si_tb_valid.h5 | grep RMSE
done
# the Lennard-Jones liquid: 8 training members, 2 validation members, one model
[ -f lj_ensemble.h5 ] || "$SURGE" ensemble "$root/inputs/md/lj_ensemble.yaml" -ensemble_members 8 -sim_max_steps 200 \
  -md_traj_every 10 -ensemble_output lj_ensemble > lj_ensemble.log
[ -f lj_valid.h5 ] || "$SURGE" ensemble "$root/inputs/md/lj_ensemble.yaml" -ensemble_members 2 -ensemble_seed 11 \
  -sim_max_steps 100 -md_traj_every 10 -ensemble_output lj_valid > lj_ensemble_valid.log
[ -f lj_dp.h5 ] || "$SURGE" train "$root/inputs/swap/lj_dp.yaml" -deepmd_valid_data lj_valid.h5 -train_output lj_dp \
  -deepmd_lcurve lj_dp.lcurve > lj_train.log
"$SURGE" model test lj_dp.h5 lj_valid.h5 | grep RMSE
