#!/usr/bin/env bash
# Central fluxes conserve the L2 norm of f semi-discretely (the upwind penalty is what dissipates
# it); with p = 2 total energy is conserved for any flux. Landau deck, central flux, t = 25:
# |L2 drift| < 1e-10 and |energy drift| < 1e-10 (measured 2.8e-13, 1.4e-13), and the upwind run of
# the same deck must lose more L2 (1.6e-9) than the central one: the test can tell them apart.
source "$(dirname "$0")/common.sh"
scratch central
$SURGE run $DECKS/landau.yaml -vlasov_flux central -sim_field_every 0 -sim_output c > c.log 2>&1 || { tail -20 c.log; exit 1; }
$SURGE run $DECKS/landau.yaml -vlasov_flux upwind -sim_field_every 0 -sim_output u > u.log 2>&1 || { tail -20 u.log; exit 1; }
check "central L2 drift" "$(drift c.log l2_f)" "<" 1e-10
check "central energy drift" "$(drift c.log total_energy)" "<" 1e-10
check "upwind L2 loss larger than central x10" "$(awk -v a=$(drift u.log l2_f) -v b=$(drift c.log l2_f) 'BEGIN{a=a<0?-a:a; b=b<0?-b:b; print a/(b+1e-300)}')" ">" 10
grep "gamma measured" c.log
