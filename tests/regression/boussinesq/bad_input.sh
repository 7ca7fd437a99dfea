#!/usr/bin/env bash
# Refused decks: one "surge: error:" line naming the option, exit 1, on 1 and 2 ranks, and no file
# created (checks run before the output is opened).
source "$(dirname "$0")/common.sh"
scratch bad_input
cases=(
  "-boussinesq_cells 33,17|nx = 33 must be even"
  "-boussinesq_cells 32,5|nz = 5 is too small"
  "-boussinesq_cells 32|-boussinesq_cells needs two entries"
  "-boussinesq_length 2|-boussinesq_length needs two entries"
  "-boussinesq_walls sticky|-boussinesq_walls: 'sticky' is not one of"
  "-boussinesq_scheme RK111|-boussinesq_scheme: 'RK111' is not one of"
  "-boussinesq_rayleigh -5|-boussinesq_rayleigh = -5"
  "-boussinesq_cells 4096,1024|GB per rank"
  "-boussinesq_noise 2|-boussinesq_noise = 2"
)
for ranks in 1 2; do
  L=""; [ $ranks = 2 ] && L="$MPIEXEC"
  # on 2 ranks a few cases suffice (each costs an MPI start-up): option parsing is rank-independent
  sel=("${cases[@]}"); [ $ranks = 2 ] && sel=("${cases[@]:0:3}" "${cases[7]}")
  for c in "${sel[@]}"; do
    args=${c%%|*}; want=${c#*|}
    rc=0; $L $SURGE run $DECKS/rb_ra1e4.yaml $args -sim_output bad > out.txt 2>&1 || rc=$?
    [ $rc = 1 ] || { cat out.txt; echo "FAIL  $args: exit $rc (want 1)"; exit 1; }
    grep -q "^surge: error: .*$want" out.txt || { cat out.txt; echo "FAIL  $args: no 'surge: error:' line with '$want'"; exit 1; }
    ! grep -qiE "traceback|PETSC ERROR|signal" out.txt || { cat out.txt; echo "FAIL  $args: traceback"; exit 1; }
    n=$(grep -c "^surge: error:" out.txt); [ $n -ge 1 ] && [ $n -le $ranks ] || { cat out.txt; echo "FAIL  $args: $n error lines"; exit 1; }
    [ -z "$(ls bad.* 2>/dev/null)" ] || { echo "FAIL  $args: files created"; exit 1; }
    echo "ok    $ranks rank(s) $args -> $(head -1 out.txt | cut -c1-110)"
  done
done
