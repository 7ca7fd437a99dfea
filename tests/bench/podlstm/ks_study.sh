#!/bin/bash
# POD-LSTM on Kuramoto-Sivashinsky, L = 22 (docs/podlstm.md "A chaotic benchmark: Kuramoto-Sivashinsky"):
# 3 independent trajectories (inputs/podlstm/ks22_ensemble.yaml, members 0-2) x 3 search seeds of
# inputs/podlstm/ks22_train.yaml, one rank each, niced; then ks_study.py: the baselines surge does not
# print (DMD = VAR(1), a quadratic regression), the error beyond the POD floor by lead in Lyapunov
# times, valid prediction times and the free runs. Run from the clone's root:
#   bash tests/bench/podlstm/ks_study.sh [WORKDIR]        (default build/ks22; ~6 min data + ~2-4 min a search)
# --dense: snapshots 1 time unit apart (inputs/podlstm/ks22_dense_ensemble.yaml) and networks of a given
# architecture trained on rollouts of 3 windows (inputs/podlstm/ks22_dense_train.yaml), 3 trajectories x
# 3 seeds; the study's slot runs iterate the model's windows (--advance 8):
#   bash tests/bench/podlstm/ks_study.sh --dense [WORKDIR]  (default build/ks22d; data ~1-5 min, a training 1-5 min)
# --dense-var: the same data, residual networks on the VAR, one-window loss, 40 epochs of a cosine rate
# (inputs/podlstm/ks22_dense_var_train.yaml):
#   bash tests/bench/podlstm/ks_study.sh --dense-var [WORKDIR]  (default build/ks22v; a training ~1 min)
# --dense-quad: the same on the quadratic regression (base: quadratic, its lags and ridge chosen on
# validation; inputs/podlstm/ks22_dense_quad_train.yaml):
#   bash tests/bench/podlstm/ks_study.sh --dense-quad [WORKDIR]  (default build/ks22q; a training ~1-2 min)
# --dense-stable: the same with the base's lags and ridge chosen only among those whose own free runs
# stay on the training attractor (quad_free_run: 1100; inputs/podlstm/ks22_dense_stable_train.yaml);
# the study's VPT runs feed back every snapshot (--advance 1: VPT at 1-snapshot resolution), 10 starts:
#   bash tests/bench/podlstm/ks_study.sh --dense-stable [WORKDIR]  (default build/ks22s; a training ~1-2 min,
#   the study ~2 min a model)
# --dense-free: the same with the trained network chosen among its epochs for its own free run too
# (free_run: 1100; inputs/podlstm/ks22_dense_free_train.yaml):
#   bash tests/bench/podlstm/ks_study.sh --dense-free [WORKDIR]  (default build/ks22f)
# --dense-noise: the same with Gaussian noise of 0.01 (scaled units) on the training inputs (input_noise;
# inputs/podlstm/ks22_dense_noise_train.yaml):
#   bash tests/bench/podlstm/ks_study.sh --dense-noise [WORKDIR]  (default build/ks22n)
# --large: L = 44 (docs/podlstm.md "A larger domain: L = 44"): data inputs/podlstm/ks44_dense_ensemble.yaml
# (128 points, snapshots 1 time unit apart), 18 POD modes, residual networks on the validation-chosen
# quadratic regression (inputs/podlstm/ks44_dense_quad_train.yaml); the study's slot runs solve
# inputs/ks/ks44.yaml, Lyapunov times of lambda_1 = 0.078, VPT at 1-snapshot resolution, 10 starts:
# members 0, 2, 3 of its five trajectories (member 1 falls onto a regular state in its test period):
#   bash tests/bench/podlstm/ks_study.sh --large [WORKDIR]  (default build/ks44q; data 2-5 min, a training
#   0.5-3 min, the study ~2-4 min a model under load)
set -e
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
# the dense variants: the same data (snapshots 1 time unit apart); the training deck, the work folder's
# prefix and how the study's slot runs advance (--advance 8: the model's windows; 1: every snapshot, 10 starts)
DENSE=1 MEMBERS="0 1 2"
case "${1:-}" in
  --dense) TRAIN=ks22_dense_train P=ks22d ADV="--advance 8" ;;
  --dense-var) TRAIN=ks22_dense_var_train P=ks22v ADV="--advance 8" ;;
  --dense-quad) TRAIN=ks22_dense_quad_train P=ks22q ADV="--advance 8" ;;
  --dense-stable) TRAIN=ks22_dense_stable_train P=ks22s ADV="--advance 1 --starts 10" ;;
  --dense-free) TRAIN=ks22_dense_free_train P=ks22f ADV="--advance 1 --starts 10" ;;
  --dense-noise) TRAIN=ks22_dense_noise_train P=ks22n ADV="--advance 1 --starts 10" ;;
  --large) TRAIN=ks44_dense_quad_train P=ks44q ADV="--advance 1 --starts 10" ;;
  *) DENSE=0 ;;
esac
if [ $DENSE = 1 ]; then
  ENS=ks22_dense_ensemble DATA=ks22_dense_data
  if [ "$1" = --large ]; then  # L = 44: its data, solver deck and Lyapunov exponent
    # member 1 falls onto a regular (periodic) state at t ~ 4240, in its test period: members 0, 2, 3
    ENS=ks44_dense_ensemble DATA=ks44_dense_data MEMBERS="0 2 3"
    ADV="$ADV --lam 0.078 --deck inputs/ks/ks44.yaml --ensemble inputs/podlstm/ks44_dense_ensemble.yaml"
  fi
  shift
  STUDY="--data $DATA.h5 --prefix $P --skip 300 --ntrain 4000 --ntest 1000 $ADV --free"
else
  ENS=ks22_ensemble TRAIN=ks22_train DATA=ks22_data P=ks22 STUDY=""
fi
W=${1:-$ROOT/build/$P}
SURGE=${SURGE:-$ROOT/bin/surge}
mkdir -p "$W" && cd "$W"
[ -f $DATA.h5 ] || nice -n 5 "$SURGE" ensemble "$ROOT/inputs/podlstm/$ENS.yaml" > ensemble.log 2>&1
for m in $MEMBERS; do
  for s in 1 2 3; do
    [ -f ${P}_m${m}_s${s}.h5 ] && continue   # done: a rerun goes on where it stopped
    nice -n 5 "$SURGE" train "$ROOT/inputs/podlstm/$TRAIN.yaml" -podlstm_member $m -podlstm_seed $s \
      -train_output ${P}_m${m}_s${s} -podlstm_prefix ${P}_m${m}_s${s} > train_${P}_m${m}_s${s}.log 2>&1
    grep -A10 "test RMSE of u by lead" train_${P}_m${m}_s${s}.log | sed "s/^/m$m s$s /"
  done
done
/usr/bin/python3 "$ROOT/tests/bench/podlstm/ks_study.py" "$W" $STUDY
