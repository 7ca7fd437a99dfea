#!/usr/bin/env bash
# Vlasov-Maxwell in three configuration dimensions (3x3v serendipity p = 1; issue 39), on the Weibel
# deck's physics (two beams +-0.3 c, vt = 0.1, c = 1, a seed B cos(k x), central fluxes), fixed dt so
# grids of different shape take the same steps:
#  - 3x3v uniform in y and z (2 cells each, Ly = Lz = 1) = the 1x3v p = 1 run: every final diagnostic
#    to 1e-12 (the y and z fluxes of uniform data cancel; only summation order differs);
#  - the same problem turned by the cyclic permutations x -> y -> z -> x and x -> z -> y -> x (k along
#    y or z, beams along v_z or v_x, seed B_x or B_y): number, energies, l2 and min f equal the x run
#    to 1e-12 of the quantity (of the total energy for the field energies, some of which are ~1e-11)
#    with the field components permuted alike (checks every x_d and v_j kernel and every
#    Maxwell face direction);
#  - 1 vs 2 ranks with a forced split in z (the z run again; the cells of each rank see both
#    neighbours): every final diagnostic to 1e-12 of the energy scale.
# ~5 s of CPU (the set-up's configuration projection is done once per configuration cell).
source "$(dirname "$0")/common.sh"
scratch maxwell_3d
L=15.707963267948966
W="$DECKS/weibel.yaml -sim_t_end 1e9 -sim_field_every 0 -vlasov_fit none -vlasov_order 1 -vlasov_vdim 3 -sim_dt 0.05 -sim_max_steps 3"
X="$W -vlasov_cdim 3 -vlasov_lower 0,0,0,-1,-1,-1"
$SURGE run $W -vlasov_cells 6,10,10,10 -vlasov_lower 0,-1,-1,-1 -vlasov_upper $L,1,1,1 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05 -sim_output a1 > a1.log 2>&1 || { tail -20 a1.log; exit 1; }
$SURGE run $X -vlasov_cells 6,2,2,10,10,10 -vlasov_upper $L,1,1,1,1,1 -vlasov_maxwell_k 0.4,0,0 -vlasov_elc_drift 0,0.3,0 -vlasov_maxwell_B0 0,0,0.05 -sim_output a3 > a3.log 2>&1 || { tail -20 a3.log; exit 1; }
same_final a1.log a3.log "3x3v (uniform in y, z) vs 1x3v"
E=$(final a3.log total_energy)
# x -> y -> z -> x: k along y, beams along v_z, seed B_x
$SURGE run $X -vlasov_cells 2,6,2,10,10,10 -vlasov_upper 1,$L,1,1,1,1 -vlasov_maxwell_k 0,0.4,0 -vlasov_elc_drift 0,0,0.3 -vlasov_maxwell_B0 0.05,0,0 -sim_output y3 > y3.log 2>&1 || { tail -20 y3.log; exit 1; }
# x -> z -> y -> x: k along z, beams along v_x, seed B_y
$SURGE run $X -vlasov_cells 2,2,6,10,10,10 -vlasov_upper 1,1,$L,1,1,1 -vlasov_maxwell_k 0,0,0.4 -vlasov_elc_drift 0.3,0,0 -vlasov_maxwell_B0 0,0.05,0 -sim_output z3 > z3.log 2>&1 || { tail -20 z3.log; exit 1; }
for k in "number_elc number_elc number_elc" "kinetic_energy kinetic_energy kinetic_energy" "total_energy total_energy total_energy" \
         "magnetic_energy magnetic_energy magnetic_energy" "electric_energy electric_energy electric_energy" "l2_f l2_f l2_f" "min_f min_f min_f" \
         "energy_Bz energy_Bx energy_By" "energy_Ex energy_Ey energy_Ez" "energy_Ey energy_Ez energy_Ex" "energy_By energy_Bz energy_Bx"; do
  set -- $k
  a=$(final a3.log $1); b=$(final y3.log $2); c=$(final z3.log $3)
  sc=1e-300; case $1 in energy_*|electric_energy|magnetic_energy) sc=$E;; esac
  for pair in "y3:$b:$2" "z3:$c:$3"; do
    IFS=: read -r run val name <<< "$pair"
    check "turned ($run): $1 vs $name (relative difference)" "$(awk -v a=$a -v b=$val -v e=$sc 'BEGIN{d=a-b; s=a<0?-a:a; s=s>e?s:e; printf "%.3e", d/s}')" "<" 1e-12
  done
done
# the z run again on 2 ranks (the 1-rank reference is z3 itself)
$MPIEXEC $SURGE run $X -vlasov_cells 2,2,6,10,10,10 -vlasov_upper 1,1,$L,1,1,1 -vlasov_maxwell_k 0,0,0.4 -vlasov_elc_drift 0.3,0,0 -vlasov_maxwell_B0 0,0.05,0 -vlasov_ranks 1,1,2 -sim_output r2 > r2.log 2>&1 || { tail -20 r2.log; exit 1; }
ranks_equal z3.log r2.log "3x3v z split"
