#!/bin/bash
# The issue-5 demo end to end (docs/swap.md): tight-binding Si MD ensemble -> four Deep Potentials ->
# MD with the adaptive swap (inside and above the training range) -> retraining on the frames the
# adaptive run flagged -> the hot run again. NOT a test: ~45 min on one core.
#   inputs/swap/si_demo.sh [WORKDIR]          (default build/si_demo; SURGE=... picks the binary)
# Steps that find their output already there are skipped, so an interrupted demo resumes.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
W=${1:-$root/build/si_demo}
mkdir -p "$W" && cd "$W" && W=$(pwd) # absolute: the run directories link the models by it
export OPENBLAS_NUM_THREADS=1
deck=$root/inputs/swap/si_adaptive.yaml
report=$root/inputs/swap/si_demo_report.py
models="-md_deepmd_models si_dp1.h5,si_dp2.h5,si_dp3.h5,si_dp4.h5" # this demo's own models, not the shipped ones
# 1. labelled data: 6 TB members for training, 2 more (another seed) for validation
[ -f si_tb_ensemble.h5 ] || "$SURGE" ensemble "$root/inputs/md/si_tb_ensemble.yaml" > ensemble.log
[ -f si_tb_valid.h5 ] || "$SURGE" ensemble "$root/inputs/md/si_tb_ensemble.yaml" -ensemble_seed 9 -ensemble_members 2 \
  -ensemble_output si_tb_valid -md_traj_file si_tb_valid.h5md > ensemble_valid.log
# 2. four Deep Potentials, seeds 1-4
for s in 1 2 3 4; do
  [ -f si_dp$s.h5 ] || "$SURGE" train "$root/inputs/swap/si_dp.yaml" -deepmd_seed $s -deepmd_numb_steps 60000 \
    -deepmd_decay_steps 2000 -deepmd_valid_data si_tb_valid.h5 -deepmd_disp_freq 5000 -train_output si_dp$s \
    -deepmd_lcurve si_dp$s.lcurve > train$s.log
done
# 3. MD: TB only, adaptive (every step / every 5th step), DP only; in DIR (1000 K) and DIR/hot (3600 K)
runs() { # $1: directory, $2...: extra options
  local d=$1; shift
  mkdir -p "$d"
  (cd "$d" && for s in 1 2 3 4; do [ -e si_dp$s.h5 ] || ln -s "$W/si_dp$s.h5" .; done
   [ -f si_tb.h5 ] || "$SURGE" run $deck $models "$@" -md_swap_policy static -md_swap_use solver -sim_output si_tb -md_rdf_file si_tb.rdf > si_tb.log
   [ -f si_tb_seed2.rdf ] || "$SURGE" run $deck $models "$@" -md_swap_policy static -md_swap_use solver -md_seed 777 \
     -sim_output si_tb_seed2 -md_rdf_file si_tb_seed2.rdf > si_tb_seed2.log   # g(r) noise scale
   "$SURGE" run $deck $models "$@" -md_deepmd_compress -sim_output si_adaptive > si_adaptive.log
   "$SURGE" run $deck $models "$@" -md_deepmd_compress -md_swap_check_every 5 -sim_output si_adaptive5 > si_adaptive5.log
   "$SURGE" run $deck $models "$@" -md_swap_policy static -md_swap_use surrogate -md_deepmd_compress -sim_output si_dp > si_dp.log
   /usr/bin/python3 "$report" . si_demo.png)
}
runs "$W"
runs "$W/hot" -md_velocity_temperature 3600
# 4. retrain on the frames the hot adaptive run handed to TB, then the hot runs again
for s in 1 2 3 4; do
  [ -f si_dp${s}_r.h5 ] || "$SURGE" train "$root/inputs/swap/si_dp.yaml" -deepmd_data si_tb_ensemble.h5,hot/si_adaptive.retrain.h5 \
    -deepmd_init_model si_dp$s.h5 -deepmd_seed $s -deepmd_numb_steps 20000 -deepmd_start_lr 1e-3 -deepmd_decay_steps 1000 \
    -deepmd_valid_data si_tb_valid.h5 -deepmd_disp_freq 5000 -train_output si_dp${s}_r > retrain$s.log
done
mkdir -p hot_r && cp hot/si_tb.h5 hot/si_tb.rdf hot/si_tb_seed2.rdf hot_r/
for s in 1 2 3 4; do ln -sf "$W/si_dp${s}_r.h5" hot_r/si_dp$s.h5; done
runs "$W/hot_r" -md_velocity_temperature 3600
