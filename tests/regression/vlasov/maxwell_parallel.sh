#!/usr/bin/env bash
# Vlasov-Maxwell on 1 vs 2 ranks and across a restart (field: maxwell, Weibel deck, 1x2v p=2, and
# 1x3v p=1 where vz is folded into the dof):
#  - 1 vs 2 ranks: PETSc's split and forced splits in x, vx and vy; the current is summed over the
#    ranks and every rank advances the same replicated field. Every final diagnostic (%.17g) agrees to
#    round-off: difference < 1e-12 of the energy scale (sums are reordered, nothing else changes);
#  - restart: 40 steps straight vs 20 + restart to 40, on 1 and 2 ranks: final diagnostics, the
#    growth fit and the checkpointed f and E, B identical bit for bit.
source "$(dirname "$0")/common.sh"
scratch maxwell_parallel
W="$DECKS/weibel.yaml -sim_t_end 1e9 -vlasov_maxwell_B0 0,0,0.05 -vlasov_fit growth -vlasov_fit_window 0,100"
cases=(
  "1x2v|$W -sim_max_steps 20|"
  "1x2v-x|$W -sim_max_steps 20|-vlasov_ranks 2,1,1"
  "1x2v-vx|$W -sim_max_steps 20|-vlasov_ranks 1,2,1"
  "1x2v-vy|$W -sim_max_steps 20|-vlasov_ranks 1,1,2"
  "1x3v-vy|$W -vlasov_vdim 3 -vlasov_order 1 -vlasov_cells 8,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper 15.707963267948966,1,1,1 -vlasov_elc_drift 0,0.3,0 -sim_max_steps 10|-vlasov_split_dims x,vx,vy -vlasov_ranks 1,1,2"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name args extra <<< "$c"
  $SURGE run $args -sim_output r1_$name > r1_$name.log 2>&1 || { tail -20 r1_$name.log; exit 1; }
  $MPIEXEC $SURGE run $args $extra -sim_output r2_$name > r2_$name.log 2>&1 || { tail -20 r2_$name.log; exit 1; }
  ranks_equal r1_$name.log r2_$name.log $name
done
args="$W -sim_field_every 0"
for np in 1 2; do
  run="$SURGE run"; [ $np = 2 ] && run="$MPIEXEC $SURGE run"
  $run $args -sim_max_steps 40 -sim_output full$np > full$np.log 2>&1 || { tail -20 full$np.log; exit 1; }
  $run $args -sim_max_steps 20 -sim_output part$np > p1_$np.log 2>&1 || { tail -20 p1_$np.log; exit 1; }
  cp part$np.chk.h5 part${np}_20.chk.h5
  $run $args -sim_max_steps 40 -sim_output part$np -restart part${np}_20.chk.h5 > p2_$np.log 2>&1 || { tail -20 p2_$np.log; exit 1; }
  diff <(grep -E "vlasov (final|fit)" full$np.log) <(grep -E "vlasov (final|fit)" p2_$np.log) || { echo "FAIL  $np rank(s): restarted run differs"; exit 1; }
  grep -q "vlasov fit growth: gamma" p2_$np.log || { echo "FAIL  no fit after restart"; exit 1; }
  for ds in /state/f_elc /values/vlasov_em; do
    h5dump -d $ds full$np.chk.h5 > a.txt && h5dump -d $ds part$np.chk.h5 > b.txt || { echo "FAIL  no $ds in the checkpoint"; exit 1; }
    grep -q "DATA" a.txt && cmp <(grep -v HDF5 a.txt) <(grep -v HDF5 b.txt) || { echo "FAIL  $np rank(s): checkpointed $ds differs"; exit 1; }
  done
  echo "ok    $np rank(s): restart at step 20 of 40: final diagnostics, fit, f and E,B identical"
done
