#!/usr/bin/env bash
# 1 rank vs 2 ranks: the phase-space DMDA is split between the ranks (and velocity dims beyond the
# third are folded), moments are summed over ranks, the field is replicated. Every final
# diagnostic printed with %.17g must agree to round-off (PETSc's split and a forced velocity split): relative difference < 1e-12 (sums are
# reordered, nothing else changes), for 1x1v p=2, 1x2v p=2, 1x3v p=1, 2x2v p=2 and 2x3v p=1.
source "$(dirname "$0")/common.sh"
scratch mpi_compare
L=12.566370614359172
cases=(
  "1x1v|$DECKS/landau.yaml -sim_t_end 3 -vlasov_fit none -vlasov_elc_perturbation 0.1"
  "1x2v|$DECKS/landau.yaml -vlasov_vdim 2 -vlasov_cells 16,12,12 -vlasov_lower 0,-6,-6 -vlasov_upper $L,6,6 -sim_max_steps 10 -vlasov_fit none -vlasov_elc_perturbation 0.1"
  "1x3v|$DECKS/landau.yaml -vlasov_vdim 3 -vlasov_order 1 -vlasov_cells 8,8,6,6 -vlasov_lower 0,-6,-6,-6 -vlasov_upper $L,6,6,6 -sim_max_steps 5 -vlasov_fit none -vlasov_elc_perturbation 0.1"
  "2x2v|$DECKS/landau2d.yaml -vlasov_cells 6,6,8,8 -sim_max_steps 6 -vlasov_fit none -vlasov_elc_perturbation 0.1"
  "2x3v|$DECKS/landau2d.yaml -vlasov_vdim 3 -vlasov_order 1 -vlasov_cells 4,4,6,6,6 -vlasov_lower 0,0,-6,-6,-6 -vlasov_upper 17.771531752633464,17.771531752633464,6,6,6 -sim_max_steps 4 -vlasov_fit none -vlasov_elc_perturbation 0.1"
)
# the same cases with the 2 ranks forced to split x or a velocity axis (vx; then configuration-space
# moments are summed over velocity ranks)
cases+=(
  "1x1v-xsplit|${cases[0]#*|}|-vlasov_ranks 2,1"
  "1x1v-vsplit|${cases[0]#*|}|-vlasov_ranks 1,2"
  "1x2v-vsplit|${cases[1]#*|}|-vlasov_ranks 1,1,2"
  "2x2v-xsplit|${cases[3]#*|}|-vlasov_split_dims x,y,vx -vlasov_ranks 2,1,1"
  "2x2v-vsplit|${cases[3]#*|}|-vlasov_split_dims x,y,vx -vlasov_ranks 1,1,2"
)
for c in "${cases[@]}"; do
  name=${c%%|*}; rest=${c#*|}; args=${rest%%|*}; extra=""
  [ "$rest" != "$args" ] && extra=${rest#*|}
  $SURGE run $args -sim_output r1_$name -sim_field_every 0 > r1_$name.log 2>&1 || { tail -20 r1_$name.log; exit 1; }
  $MPIEXEC $SURGE run $args $extra -sim_output r2_$name -sim_field_every 0 > r2_$name.log 2>&1 || { tail -20 r2_$name.log; exit 1; }
  # relative to the run's energy scale (momenta are ~1e-15 and meaningless relative to themselves);
  # the field energy also relative to itself, 1e-10 (rho = n - 1 cancels ~4 digits at these amplitudes)
  etot=$(final r1_$name.log total_energy)
  paste <(grep "vlasov final:" r1_$name.log) <(grep "vlasov final:" r2_$name.log) | awk -v n=$name -v E=$etot '
    # the same diagnostic on both sides, and numbers (awk would read "nan" or a message as 0)
    $3 != $10 || $4 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || $11 !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ { bad++; print "not comparable:", $0 }
    { a=$4; b=$11; d=a-b; d=d<0?-d:d; s=(a<0?-a:a); E=E<0?-E:E; r=d/(s>E?s:E);
      if ($3=="field_energy") { fr=d/s; if (fr>fm) fm=fr }
      if (r>m) {m=r; k=$3} c++ }
    END { printf "%s: %d diagnostics, max difference %.3e of the energy scale (%s), field energy %.3e relative\n", n, c, m, k, fm;
          exit (c>=6 && !bad && m<1e-12 && fm<1e-10)?0:1 }' || { echo "FAIL $name"; exit 1; }
done
