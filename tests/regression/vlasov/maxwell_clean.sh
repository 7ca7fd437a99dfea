#!/usr/bin/env bash
# Hyperbolic divergence cleaning of Maxwell's equations (maxwell_clean_E = chi, maxwell_clean_B = gamma;
# Munz et al. 2000, the perfectly hyperbolic form Gkeyll uses; issue 39), on a 2x2v p = 2 problem with
# the Weibel deck's plasma (beams +-0.3 c, vt = 0.1, c = 1), central fluxes, seed E_z = B_z = 0.05
# cos(k.x), k = (0.4, 0.3), t = 20: the DG scheme makes Gauss-law errors (the discrete charge
# continuity of the Vlasov fluxes is not the DG divergence of the current) and, at serendipity p = 2,
# div B errors (the discrete divergence of the discrete curl is not zero).
#  - ||div_h E - rho||_2 at t = 20: chi = 1 at least 2x below no cleaning (measured 0.2407 -> 0.0577, 4.2x);
#  - ||div_h B||_2 at t = 20: gamma = 4 at least 2x below (measured 1.078e-2 -> 1.29e-3, 8.4x; gamma <= 2
#    does not help here: the error is driven near the plasma-light frequency, see docs/vlasov.md);
#  - off (0, 0) leaves phi, psi at zero: cleaning_energy exactly 0;
#  - 1 vs 2 ranks with cleaning on (2x2v p = 1, chi = gamma = 1, forced y and vx splits): every final
#    diagnostic to 1e-12 of the energy scale.
source "$(dirname "$0")/common.sh"
scratch maxwell_clean
L=15.707963267948966
W="$DECKS/weibel.yaml -sim_field_every 0 -vlasov_fit none -vlasov_cdim 2 -vlasov_lower 0,0,-1,-1 -vlasov_upper $L,6,1,1 -vlasov_maxwell_k 0.4,0.3"
P2="$W -vlasov_order 2 -vlasov_cells 8,4,10,10 -vlasov_maxwell_B0 0,0,0.05 -vlasov_maxwell_E0 0,0,0.05 -sim_t_end 20 -sim_max_steps 2000"
$SURGE run $P2 -sim_output off > off.log 2>&1 || { tail -20 off.log; exit 1; }
$SURGE run $P2 -vlasov_maxwell_clean_E 1 -vlasov_maxwell_clean_B 4 -sim_output on > on.log 2>&1 || { tail -20 on.log; exit 1; }
grep -E "div_|cleaning_energy|total_energy" off.log on.log
ratio() { awk -v a="$(final off.log $1)" -v b="$(final on.log $1)" 'BEGIN{print (b > 0) ? a/b : 0}'; }
check "div E - rho error, no cleaning / chi = 1" "$(ratio div_E_error)" ">" 2
check "div B error, no cleaning / gamma = 4" "$(ratio div_B_error)" ">" 2
check "div B error without cleaning is there to clean (> 1e-3)" "$(final off.log div_B_error)" ">" 1e-3
check "cleaning off: potentials stay zero" "$(final off.log cleaning_energy)" "<" 1e-300
check "particle number drift with cleaning" "$(drift on.log number_elc)" "<" 1e-12
P1="$W -vlasov_order 1 -vlasov_cells 8,4,10,10 -vlasov_maxwell_B0 0,0,0.05 -vlasov_maxwell_E0 0,0,0.05 -sim_dt 0.05 -sim_max_steps 12 -sim_t_end 1e9 -vlasov_maxwell_clean_E 1 -vlasov_maxwell_clean_B 1"
$SURGE run $P1 -sim_output r1 > r1.log 2>&1 || { tail -20 r1.log; exit 1; }
for split in 1,2,1 1,1,2; do
  $MPIEXEC $SURGE run $P1 -vlasov_split_dims x,y,vx -vlasov_ranks $split -sim_output r2 > r2_$split.log 2>&1 || { tail -20 r2_$split.log; exit 1; }
  ranks_equal r1.log r2_$split.log "cleaning on, split $split"
done
