#!/bin/bash
# MeshfreeFlowNet's evaluation, end to end (docs/mffn.md "Evaluation"): the Ra = 1e6 data, the models
# (MeshfreeFlowNet with gamma 0, 0.0125, 0.1, 0.3, and 0.0125 with the continuity residual weighted
# 24x; the plain U-Net), their whole-domain predictions on the held-out data and the figures. Steps
# whose output exists are skipped, so an interrupted run resumes; everything runs niced on one BLAS
# thread.
#   bash tests/bench/mffn/eval.sh [WORK]          (default build/mffn_eval)
#   SEED=2 ARMS="mffn mffn_c24" bash tests/bench/mffn/eval.sh WORK2   (another seed of some arms)
# Cost on the 2-core VM (docs/mffn.md): stage 1 ~5.8 steps/s (3000 steps ~9 min), each stage-2 arm
# with the PDE term ~0.35 s/step (1200 steps ~7 min; 1 min for gamma 0), the U-Nets 1 + 9.5 min,
# each mffn model's whole-domain prediction of one data set ~155 s (~45 s since the softplus kernel):
# about 2 h for the default arms.
#
# Data (inputs/mffn/ensemble_ra1e6.yaml): training seeds 7-12 (6 members x 81 snapshots, Ra = 1e6);
# held out: seeds 31-32 at Ra = 1e6 and seeds 41-42 at Ra = 5e5 (generalisation to another Ra).
# eval.py evaluates every method also with its velocity projected onto divergence-free fields (--project).
# Training (inputs/mffn/ra1e6.yaml, two stages, because the PDE term costs ~10x a regression step):
#   stage 1: gamma 0, PRE steps, 512 points per crop; the checkpoint at PRE is shared by the ablation;
#   stage 2: from that checkpoint (weights, Adam, plateau state), FT more steps with 128 points per
#            crop and gamma 0 (mffn_g0), 0.0125 (mffn: the paper's), 0.1 (mffn_g01), 0.3 (mffn_g03),
#            or 0.0125 with -mffn_pde_weights 1,1,1,24 (mffn_c24: continuity at 0.3, the rest at 0.0125),
#            and that with -mffn_grad_energy_weight 0.5 (mffn_c24e: the crop's mean-square velocity
#            gradient matched, docs/mffn_experiments.md "A dissipation term"), and that with
#            -mffn_thermal_energy_weight 0.1 as well (mffn_c24et: the buoyancy gradient's too, "The thermal
#            dissipation term" in docs/mffn_experiments.md), and that with -mffn_heat_flux_weight 0.1 (mffn_c24etf: the crop's mean w b
#            matched, "The heat-flux term": the arm closest to the bars, and the shipped model's) by
#            default, mffn_c24et when ARMS names it; and mffn_c24vtf when ARMS names it: mffn_c24etf with
#            the velocity energy term replaced by -mffn_vorticity_energy_weight 0.5 (the crop's enstrophy,
#            which the projection keeps: "The enstrophy term"), mffn_c24v1tf that at weight 1;
#            gamma 1 (mffn_g1) when ARMS names it;
#   mffn_c24etfg: mffn_c24etf with its correction's gain fitted on 256 training crops x 1024 points and
#            folded into ImNet's last layer (test_bench_mffn_eval calibrate, ~7 s: the same model as
#            training mffn_c24etf with -mffn_calibrate_crops 256 -mffn_valid_points 1024; docs/mffn.md
#            "The correction's gain"); trains mffn_c24etf when ARMS names only it;
#   mffn_sfe: the stream-function decoder (-mffn_stream_function 1: u, w from a stream function,
#            divergence-free by construction; docs/mffn_experiments.md "A divergence-free decoder"), its own stage 1
#            (PRE steps, gamma 0) and stage 2 (FT steps, gamma 0.0125, -mffn_grad_energy_weight 0.5);
#            only when ARMS names it (a step costs ~2x);
#   U-Net: the same crops, points, learning rate, plateau decay and clipping, PRE + FT steps at 512
#          points (test_bench_mffn_eval train-unet: encoder 16 32 64 + sub-pixel head, residual), and
#          unet_long with ULONG (10) times the steps.
set -e
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/tests/bench/require.sh"
bench_require_py mffn/eval.sh matplotlib python3-matplotlib # eval.py --plot, before hours of training
S=$root/bin/surge
E=$root/build/tests/test_bench_mffn_eval
W=${1:-$root/build/mffn_eval}
PRE=${PRE:-3000}
FT=${FT:-1200}
SEED=${SEED:-1}
ARMS=${ARMS:-mffn_g0 mffn mffn_g01 mffn_g03 mffn_c24 mffn_c24e mffn_c24etf unet unet_long}
want() { [[ " $ARMS " == *" $1 "* ]] || { [ "$1" = mffn_c24etf ] && [[ " $ARMS " == *" mffn_c24etfg "* ]]; }; }
want_any() { for a in "$@"; do want "$a" && return 0; done; return 1; }
[ -x "$S" ] && [ -x "$E" ] || { echo "eval.sh: $S or $E is missing: make tests"; exit 1; }
mkdir -p "$W" && cd "$W" && W=$(pwd) # absolute: eval.py runs from here
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
N="nice -n 5"
ENS=$root/inputs/mffn/ensemble_ra1e6.yaml
D=$root/inputs/mffn/ra1e6.yaml
[ -f rb6.h5 ] || $N "$S" ensemble "$ENS" -ensemble_output rb6 > ens_train.log
[ -f rb6_valid.h5 ] || $N "$S" ensemble "$ENS" -ensemble_output rb6_valid -ensemble_seed 31 -ensemble_members 2 > ens_valid.log
[ -f rb6_ra5e5.h5 ] || $N "$S" ensemble "$ENS" -ensemble_output rb6_ra5e5 -ensemble_seed 41 -ensemble_members 2 -boussinesq_rayleigh 5e5 > ens_ra5e5.log
V="-mffn_valid_data rb6_valid.h5 -mffn_seed $SEED"
# the stage-2 arms from the shared stage-1 checkpoint: name, gamma, pde weights, the grad-energy,
# thermal-energy, heat-flux and vorticity-energy weights
STAGE2=("mffn_g0 0 1,1,1,1 0 0 0 0" "mffn 0.0125 1,1,1,1 0 0 0 0" "mffn_g01 0.1 1,1,1,1 0 0 0 0" "mffn_g03 0.3 1,1,1,1 0 0 0 0" "mffn_g1 1 1,1,1,1 0 0 0 0"
  "mffn_c24 0.0125 1,1,1,24 0 0 0 0" "mffn_c24e 0.0125 1,1,1,24 0.5 0 0 0" "mffn_c24et 0.0125 1,1,1,24 0.5 0.1 0 0" "mffn_c24etf 0.0125 1,1,1,24 0.5 0.1 0.1 0"
  "mffn_c24vtf 0.0125 1,1,1,24 0 0.1 0.1 0.5" "mffn_c24v1tf 0.0125 1,1,1,24 0 0.1 0.1 1")
# stage 1 (one step past PRE so that the checkpoint at PRE is written; its model is not used), when any stage-2 arm is wanted
! want_any "${STAGE2[@]%% *}" || [ -f pre_ckpt.h5 ] || $N "$S" train "$D" -mffn_gamma 0 -mffn_numb_steps $((PRE + 1)) -mffn_save_freq $PRE -mffn_save_ckpt pre_ckpt.h5 $V \
  -train_output stage1 -mffn_lcurve stage1.lc > stage1.log
for arm in "${STAGE2[@]}"; do
  set -- $arm
  want "$1" || continue
  [ -f "$1.h5" ] || $N "$S" train "$D" -mffn_restart pre_ckpt.h5 -mffn_numb_steps $((PRE + FT)) -mffn_points 128 -mffn_gamma "$2" -mffn_pde_weights "$3" -mffn_grad_energy_weight "$4" -mffn_thermal_energy_weight "$5" -mffn_heat_flux_weight "$6" -mffn_vorticity_energy_weight "$7" $V \
    -train_output "$1" -mffn_lcurve "$1.lc" > "$1.log"
done
! want mffn_c24etfg || [ -f mffn_c24etfg.h5 ] || $N "$E" calibrate mffn_c24etf.h5 rb6.h5 mffn_c24etfg.h5 16 64 64 256 1024 "$SEED" > mffn_c24etfg.log
# the stream-function arm: ImNet decodes p, b, psi, so it cannot start from the shared checkpoint
if want mffn_sfe; then
  SF="-mffn_stream_function 1"
  [ -f pre_sf_ckpt.h5 ] || $N "$S" train "$D" $SF -mffn_gamma 0 -mffn_numb_steps $((PRE + 1)) -mffn_save_freq $PRE -mffn_save_ckpt pre_sf_ckpt.h5 $V \
    -train_output stage1_sf -mffn_lcurve stage1_sf.lc > stage1_sf.log
  [ -f mffn_sfe.h5 ] || $N "$S" train "$D" $SF -mffn_restart pre_sf_ckpt.h5 -mffn_numb_steps $((PRE + FT)) -mffn_points 128 -mffn_gamma 0.0125 -mffn_grad_energy_weight 0.5 $V \
    -train_output mffn_sfe -mffn_lcurve mffn_sfe.lc > mffn_sfe.log
fi
! want unet || [ -f unet.h5 ] || $N "$E" train-unet -unet_seed $SEED -unet_data rb6.h5 -unet_residual -unet_steps $((PRE + FT)) -unet_start_lr 3e-3 \
  -unet_plateau_window 122 -unet_plateau_patience 2 -unet_plateau_factor 0.5 -unet_plateau_threshold 1e-3 -unet_clip_norm 1 \
  -unet_output unet.h5 > unet.log
# the U-Net again with ULONG (10) times the steps: one U-Net step costs ~1/15 of a stage-1 mffn step, so this is
# about mffn's own training time (the comparison at equal cost rather than at equal steps)
ULONG=${ULONG:-10}
! want unet_long || [ -f unet_long.h5 ] || $N "$E" train-unet -unet_seed $SEED -unet_data rb6.h5 -unet_residual -unet_steps $((ULONG * (PRE + FT))) -unet_start_lr 3e-3 \
  -unet_plateau_window 122 -unet_plateau_patience 2 -unet_plateau_factor 0.5 -unet_plateau_threshold 1e-3 -unet_clip_norm 1 \
  -unet_output unet_long.h5 > unet_long.log
$N /usr/bin/python3 "$root/tests/bench/mffn/eval.py" "$W" --plot --project | tee eval.out
