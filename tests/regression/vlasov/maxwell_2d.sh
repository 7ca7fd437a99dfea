#!/usr/bin/env bash
# Vlasov-Maxwell kernels for two configuration dimensions (2x2v, 2x3v serendipity; issue 39), on the
# Weibel deck's physics (two beams +-0.3 c, vt = 0.1, c = 1, seed Bz cos(k x), central fluxes), fixed
# dt so grids of different shape take the same steps:
#  - y-uniform 2x2v p = 1 (k along x, Ly = 1, 2 cells in y, and 1 cell in y) = the 1x2v p = 1 run:
#    every final diagnostic to 1e-12 (the y fluxes of uniform data cancel; only summation order
#    differs). One cell: both sides of its y face are the cell itself (the kernels' restrict outputs
#    must not alias: before that was handled, this run differed by ~1e-1);
#  - the same problem turned by 90 degrees (k along y, beams along vx, 2 cells in x): number, energies
#    (Bz, total, kinetic, magnetic), l2 and min f equal the unturned 2x2v run to 1e-12, Ex <-> Ey;
#  - 1 vs 2 ranks, forced splits in y and in vx (2x2v p = 1) and in vx (2x3v p = 1, vy, vz folded):
#    every final diagnostic to 1e-12 of the energy scale (sums reordered, nothing else);
#  - total (particle + field) energy with central fluxes, 2x2v p = 2: the drift falls 8x when dt
#    halves (SSP-RK3, third order; pass: ratio in [6, 10]).
source "$(dirname "$0")/common.sh"
scratch maxwell_2d
W="$DECKS/weibel.yaml -sim_t_end 1e9 -sim_field_every 0 -vlasov_fit none -vlasov_order 1 -vlasov_maxwell_B0 0,0,0.05 -sim_dt 0.05 -sim_max_steps 12"
L=15.707963267948966
$SURGE run $W -vlasov_cells 8,10,10 -sim_output a1 > a1.log 2>&1 || { tail -20 a1.log; exit 1; }
$SURGE run $W -vlasov_cdim 2 -vlasov_cells 8,2,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_maxwell_k 0.4,0 -sim_output a2 > a2.log 2>&1 || { tail -20 a2.log; exit 1; }
same_final a1.log a2.log "2x2v (uniform in y) vs 1x2v"
# one cell in y (folded by the default split, so periodic inside the dof; its faces are the cell's own)
$SURGE run $W -vlasov_cdim 2 -vlasov_cells 8,1,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_maxwell_k 0.4,0 -sim_output a21 > a21.log 2>&1 || { tail -20 a21.log; exit 1; }
same_final a1.log a21.log "2x2v (uniform in y, one cell in y) vs 1x2v"
$SURGE run $W -vlasov_cdim 2 -vlasov_cells 2,8,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper 1,$L,1,1 -vlasov_maxwell_k 0,0.4 -vlasov_elc_drift 0.3,0 -sim_output b2 > b2.log 2>&1 || { tail -20 b2.log; exit 1; }
for k in number_elc kinetic_energy total_energy magnetic_energy energy_Bz l2_f min_f "energy_Ex energy_Ey" "energy_Ey energy_Ex"; do
  set -- $k
  a=$(final a2.log $1); b=$(final b2.log ${2:-$1})
  check "turned 90 degrees: $1 vs ${2:-$1} (relative difference)" "$(awk -v a=$a -v b=$b 'BEGIN{d=a-b; s=a<0?-a:a; s=s>1e-300?s:1; printf "%.3e", d/s}')" "<" 1e-12
done
E=$(final a2.log total_energy)
cases=(
  "2x2v-y|$W -vlasov_cdim 2 -vlasov_cells 8,4,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,6,1,1 -vlasov_maxwell_k 0.4,0.3|-vlasov_split_dims x,y,vx -vlasov_ranks 1,2,1"
  "2x2v-vx|$W -vlasov_cdim 2 -vlasov_cells 8,4,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,6,1,1 -vlasov_maxwell_k 0.4,0.3|-vlasov_split_dims x,y,vx -vlasov_ranks 1,1,2"
  "2x3v-vx|$W -vlasov_cdim 2 -vlasov_vdim 3 -sim_max_steps 4 -vlasov_cells 4,2,10,10,10 -vlasov_lower 0,0,-1,-1,-1 -vlasov_upper $L,6,1,1,1 -vlasov_maxwell_k 0.4,0 -vlasov_elc_drift 0,0.3,0|-vlasov_split_dims x,y,vx -vlasov_ranks 1,1,2"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name args extra <<< "$c"
  $SURGE run $args -sim_output r1_$name > r1_$name.log 2>&1 || { tail -20 r1_$name.log; exit 1; }
  $MPIEXEC $SURGE run $args $extra -sim_output r2_$name > r2_$name.log 2>&1 || { tail -20 r2_$name.log; exit 1; }
  ranks_equal r1_$name.log r2_$name.log $name
done
errs=()
for dt in 0.04 0.02; do
  $SURGE run $W -vlasov_order 2 -vlasov_cdim 2 -vlasov_cells 6,2,10,10 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,6,1,1 -vlasov_maxwell_k 0.4,0 -vlasov_maxwell_B0 0,0,0.3 -sim_dt $dt -sim_max_steps 100000 -sim_t_end 2 -sim_output e_$dt > e_$dt.log 2>&1 || { tail -20 e_$dt.log; exit 1; }
  e=$(drift e_$dt.log total_energy); errs+=("$e"); echo "2x2v p=2 dt $dt  relative total-energy drift $e  (magnetic $(drift e_$dt.log magnetic_energy))"
done
r=$(awk -v a="${errs[0]}" -v b="${errs[1]}" 'BEGIN{a=a<0?-a:a; b=b<0?-b:b; print a/b}')
check "energy drift ratio when dt halves > 6" "$r" ">" 6
check "energy drift ratio when dt halves < 10 (third order: 8)" "$r" "<" 10
