#!/bin/bash
# POD-LSTM on Kuramoto-Sivashinsky, L = 22 (docs/podlstm.md "A chaotic benchmark: Kuramoto-Sivashinsky"):
# 3 independent trajectories (inputs/podlstm/ks22_ensemble.yaml, members 0-2) x 3 search seeds of
# inputs/podlstm/ks22_train.yaml, one rank each, niced; then ks_study.py: the baselines surge does not
# print (DMD = VAR(1), a quadratic regression), the error beyond the POD floor by lead in Lyapunov
# times, valid prediction times and the free runs. Run from the clone's root:
#   bash tests/bench/podlstm/ks_study.sh [WORKDIR]        (default build/ks22; ~6 min data + ~2-4 min a search)
set -e
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
W=${1:-$ROOT/build/ks22}
SURGE=${SURGE:-$ROOT/bin/surge}
mkdir -p "$W" && cd "$W"
[ -f ks22_data.h5 ] || nice -n 5 "$SURGE" ensemble "$ROOT/inputs/podlstm/ks22_ensemble.yaml" > ensemble.log 2>&1
for m in 0 1 2; do
  for s in 1 2 3; do
    [ -f ks22_m${m}_s${s}.h5 ] && continue   # done: a rerun goes on where it stopped
    nice -n 5 "$SURGE" train "$ROOT/inputs/podlstm/ks22_train.yaml" -podlstm_member $m -podlstm_seed $s \
      -train_output ks22_m${m}_s${s} -podlstm_prefix ks22_m${m}_s${s} > train_m${m}_s${s}.log 2>&1
    grep -A10 "test RMSE of u by lead" train_m${m}_s${s}.log | sed "s/^/m$m s$s /"
  done
done
/usr/bin/python3 "$ROOT/tests/bench/podlstm/ks_study.py" "$W"
