#!/usr/bin/env bash
# Vlasov-Maxwell physics (field: maxwell):
#  1. Weibel growth rate, 1x2v p=2 (inputs/vlasov/weibel.yaml: gkylzero's rt_vlasov_weibel_1x2v_p2
#     parameters, k = 0.4, drifts +-0.3 c along vy, vt = 0.1, c = omega_pe = 1), fitted from the
#     magnetic energy over t in [20, 45], against the root of the kinetic transverse dispersion
#     relation the solver computes (Faddeeva function): within 2 % (measured 0.098244 vs 0.098485,
#     2.4e-3); second set k = 0.3 (L = 2 pi / 0.3): 0.077401 vs 0.077142 (3.4e-3).
#  2. Total (particle + field) energy with central Maxwell fluxes, through growth and saturation
#     (t = 55): < 1e-7 relative (measured 4.0e-9), third order in dt (halving cfl: ratio in [6, 10]);
#     particle number < 1e-12 (3.4e-14).
#  3. Electrostatic limit: the Landau deck (1x1v) with field: maxwell, c = 10 v_th: gamma within
#     1 % of the kinetic root (measured -0.153332 vs -0.153359), total energy < 1e-10 (2e-13).
source "$(dirname "$0")/common.sh"
scratch maxwell_weibel
D=$DECKS/weibel.yaml
$SURGE run $D -sim_output a > a.log 2>&1 || { tail -20 a.log; exit 1; }
$SURGE run $D -vlasov_maxwell_k 0.3 -vlasov_upper 20.943951023931955,1,1 -sim_output b > b.log 2>&1 || { tail -20 b.log; exit 1; }
growth_vs_root "Weibel" a.log b.log
check "Weibel root k=0.4 is 0.0985" "$(awk '/gamma measured/ {print $8 - 0.0985}' a.log)" "<" 5e-4
check "total energy drift (cfl 0.9)" "$(drift a.log total_energy)" "<" 1e-7
check "particle number drift" "$(drift a.log number_elc)" "<" 1e-12
check "magnetic energy grew x1000" "$(drift a.log magnetic_energy)" ">" 1000
$SURGE run $D -vlasov_cfl 0.45 -vlasov_fit none -sim_output h > h.log 2>&1 || { tail -20 h.log; exit 1; }
r=$(awk -v a=$(drift a.log total_energy) -v b=$(drift h.log total_energy) 'BEGIN{print a/b}')
echo "      total energy drift: cfl 0.9 $(drift a.log total_energy), cfl 0.45 $(drift h.log total_energy)"
check "energy drift ratio when dt halves > 6" "$r" ">" 6
check "energy drift ratio when dt halves < 10 (third order: 8)" "$r" "<" 10
# electrostatic limit
$SURGE run $DECKS/landau.yaml -vlasov_field maxwell -vlasov_c 10 -sim_field_every 0 -sim_output l > l.log 2>&1 || { tail -20 l.log; exit 1; }
grep "gamma measured" l.log
check "Landau gamma with Maxwell fields, relative to the root" "$(awk '/gamma measured/ {print ($6-$8)/$8}' l.log)" "<" 0.01
check "Landau total energy drift with Maxwell fields" "$(drift l.log total_energy)" "<" 1e-10
