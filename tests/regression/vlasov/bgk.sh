#!/usr/bin/env bash
# BGK collisions (collisions: bgk), the Maxwellian corrected until its discrete moments equal f's:
#  1. inputs/vlasov/bgk_relax.yaml (1x2v p=2, homogeneous, beams at vy = +-1.5, vt = 1, nu = 1, t = 3):
#     particle number, momentum and energy conserved: < 1e-12 relative (momentum: absolute, of the
#     energy scale) (measured 3.4e-15, 1.5e-15, 1.8e-14); the temperature anisotropy
#     ke_y - ke_x decays as exp(-nu t): measured rate within 1e-3 of nu (SSP-RK3 error; measured
#     1.00001); from t = 3 to 20 the L2 distance of f to the Maxwellian of its moments falls as
#     exp(-nu t): log ratio / (-17) within 1 % of 1 (measured 2.62e-2 -> 1.08e-9: 1.00015), < 1e-8 at t = 20;
#  2. the same deck on 2 ranks with the velocity space split (vy): final diagnostics equal to 1e-12;
#  3. collisional Landau damping (1x1v, Poisson field, nu = 0.05, t = 10): number and total energy
#     < 1e-12 (measured 4.9e-14, 5.4e-14);
#  4. a drifting top-hat (vx = 0.8, t = 1): u_x != u_y, so the Maxwellian's vx and vy factors differ
#     (deck 1 is symmetric in them and cannot tell them apart): number, momentum and energy < 1e-12
#     (measured 1.1e-15; 6.7e-16 and 1.1e-15; 1.4e-16).
source "$(dirname "$0")/common.sh"
scratch bgk
D=$DECKS/bgk_relax.yaml
$SURGE run $D -sim_output a > a.log 2>&1 || { tail -20 a.log; exit 1; }
conserved a.log "energy ~2" x y
# Delta(t) = ke_y - ke_x; initial values from the final value and its relative change
rate=$(aniso_rate a.log 3)
echo "      anisotropy decay rate $rate (nu = 1)"
check "anisotropy rate - nu" "$(awk -v r=$rate 'BEGIN{print r-1}')" "<" 1e-3
$SURGE run $D -sim_t_end 20 -sim_output b > b.log 2>&1 || { tail -20 b.log; exit 1; }
grep "bgk:" a.log b.log
d3=$(awk '/distance to the Maxwellian/ {print $13}' a.log); d20=$(awk '/distance to the Maxwellian/ {print $13}' b.log)
check "L2 distance to the Maxwellian at t = 20" "$d20" "<" 1e-8
check "distance decay: ln(d20/d3)/(-17) - 1" "$(awk -v a=$d3 -v b=$d20 'BEGIN{print log(b/a)/(-17)-1}')" "<" 0.01
check "energy drift to t = 20" "$(drift b.log kinetic_energy)" "<" 1e-12
$MPIEXEC $SURGE run $D -vlasov_ranks 1,1,2 -sim_output a2 > a2.log 2>&1 || { tail -20 a2.log; exit 1; }
same_final a.log a2.log "1 vs 2 ranks (vy split)"
$SURGE run $DECKS/landau.yaml -vlasov_collisions bgk -vlasov_elc_nu 0.05 -sim_t_end 10 -vlasov_fit none -sim_field_every 0 -sim_output l > l.log 2>&1 || { tail -20 l.log; exit 1; }
check "collisional Landau: number drift" "$(drift l.log number_elc)" "<" 1e-12
check "collisional Landau: total energy drift" "$(drift l.log total_energy)" "<" 1e-12
$SURGE run $D -vlasov_elc_init tophat -vlasov_elc_drift 0.8,0 -sim_t_end 1 -sim_output t > t.log 2>&1 || { tail -20 t.log; exit 1; }
conserved t.log "drifting top-hat" x y
