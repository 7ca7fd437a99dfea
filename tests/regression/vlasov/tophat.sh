#!/usr/bin/env bash
# Top-hat + bump initial condition (init: tophat) and its LBO relaxation (issue 39):
#  1. inputs/vlasov/lbo_tophat_1x1v.yaml (90 % uniform on |v| < 1.2, edges inside velocity cells,
#     10 % Maxwellian bump at 2.5, vt 0.3; 24 velocity cells p = 2, nu = 1, t = 8): the projection is
#     exact (piecewise Gauss on the part of each cell inside the top-hat), so the initial number,
#     momentum and energy equal the analytic 10, 2.5, 5.33 to 1e-13 relative (measured <= 2e-16;
#     whole-cell 16-point Gauss over the edges: 1e-4); number, momentum and energy conserved < 1e-12
#     over 6,390 steps (measured 3.2e-13, 3.2e-13, 3.4e-13);
#  2. the relaxed state is the Maxwellian of the moments within discretisation error: the L2 distance
#     is the same at t = 4 and t = 8 (a steady state: 1e-3 relative; measured 3e-6) and falls with
#     the velocity cell width as dv^(p+1): 24 -> 48 cells divides it by more than 6 (order > 2.6;
#     measured 3.89e-4 -> 4.17e-5, 9.3 = order 3.2);
#  3. inputs/vlasov/lbo_tophat_1x2v.yaml (square top-hat + bump, 20 x 20 cells) to t = 0.5: initial
#     moments exact (10, 2.5, 7.535) to 1e-13, conservation < 1e-12.
source "$(dirname "$0")/common.sh"
scratch tophat
PY=/usr/bin/python3
# initial LOG.h5 NAME EXACT: relative error of the t = 0 diagnostic against its analytic value
initial() { $PY -c "import h5py,sys; v=h5py.File('$1','r')['diagnostics/$2'][0]; print(abs(v-$3)/abs($3))"; }
D=$DECKS/lbo_tophat_1x1v.yaml
$SURGE run $D -sim_output a > a.log 2>&1 || { tail -20 a.log; exit 1; }
check "1x1v initial number vs 10" "$(initial a.h5 number_elc 10)" "<" 1e-13
check "1x1v initial momentum vs 2.5" "$(initial a.h5 momentum_x 2.5)" "<" 1e-13
check "1x1v initial energy vs 5.33" "$(initial a.h5 kinetic_energy 5.33)" "<" 1e-13
conserved a.log "relative: momentum 2.5" x
$SURGE run $D -sim_t_end 4 -sim_output b > b.log 2>&1 || { tail -20 b.log; exit 1; }
$SURGE run $D -vlasov_cells 2,48 -sim_output c > c.log 2>&1 || { tail -20 c.log; exit 1; }
d8=$(awk '/distance to the Maxwellian/ {print $13}' a.log); d4=$(awk '/distance to the Maxwellian/ {print $13}' b.log); d48=$(awk '/distance to the Maxwellian/ {print $13}' c.log)
echo "      distance to the Maxwellian of the moments: t = 4: $d4, t = 8: $d8; 48 cells: $d48"
check "steady state: distance(t=4)/distance(t=8) - 1" "$(awk -v a=$d4 -v b=$d8 'BEGIN{print a/b-1}')" "<" 1e-3
check "distance 24 cells / 48 cells" "$(awk -v a=$d8 -v b=$d48 'BEGIN{print a/b}')" ">" 6
D2=$DECKS/lbo_tophat_1x2v.yaml
$SURGE run $D2 -sim_t_end 0.5 -sim_output e > e.log 2>&1 || { tail -20 e.log; exit 1; }
check "1x2v initial number vs 10" "$(initial e.h5 number_elc 10)" "<" 1e-13
check "1x2v initial momentum_x vs 2.5" "$(initial e.h5 momentum_x 2.5)" "<" 1e-13
check "1x2v initial energy vs 7.535" "$(initial e.h5 kinetic_energy 7.535)" "<" 1e-13
conserved e.log "relative: momentum 2.5" x y
