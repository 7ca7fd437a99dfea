#!/usr/bin/env bash
# 1 rank vs 2 ranks ($MPIEXEC), LJ liquid NVE (864 atoms, 100 steps, ~13 list rebuilds with
# migration).  Full neighbour lists (default): each atom's force is summed in an order fixed by
# positions and global ids only, so the trajectories must be BIT-IDENTICAL (h5diff, tolerance 0).
# Half lists with Newton's third law (md_newton): ghost forces come back by reverse communication
# in a decomposition-dependent order, so positions may differ by round-off amplified by the chaotic
# dynamics over 100 steps: required |dx| <= 1e-9 sigma (measured ~5e-15).
# Half lists against full lists (1 rank): the same forces summed in another order, so the same
# trajectory to round-off: required |dx| and |df| <= 1e-9 (measured ~1e-14); this is what checks the
# Newton scatter of the pair loop (the 1-vs-2-rank comparison runs the same loop on both sides).
# Thermostats: Langevin (noise keyed by atom id and step) and Nose-Hoover chain (exact global
# kinetic-energy sum) must stay bit-identical too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
MPIEXEC=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
opts="-md_lattice_cells 6,6,6 -md_traj_every 100 -md_thermo_every 100"
for mode in full newton langevin nhc; do
  extra=""
  case $mode in
    newton) extra="-md_newton" ;;
    langevin) extra="-md_ensemble langevin -md_temperature 1.2 -md_damp 0.5" ;;
    nhc) extra="-md_ensemble nhc -md_temperature 1.2 -md_damp 0.5" ;;
  esac
  "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output r1_$mode -md_traj_file r1_$mode.h5md $opts $extra > r1_$mode.log
  $MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output r2_$mode -md_traj_file r2_$mode.h5md $opts $extra > r2_$mode.log
  grep -q "ranks 1x1x2" r2_$mode.log || { echo "2-rank run did not decompose"; cat r2_$mode.log; exit 1; }
done
for q in position velocity force image; do
  h5diff r1_full.h5md r2_full.h5md /particles/all/$q/value /particles/all/$q/value \
    || { echo "FAIL: full lists: $q differs between 1 and 2 ranks"; exit 1; }
done
echo "full lists: positions, velocities, forces, images bit-identical after 100 steps (1 vs 2 ranks)"
for mode in langevin nhc; do
  for q in position velocity force; do
    h5diff r1_$mode.h5md r2_$mode.h5md /particles/all/$q/value /particles/all/$q/value \
      || { echo "FAIL: $mode: $q differs between 1 and 2 ranks"; exit 1; }
  done
  echo "$mode: bit-identical after 100 steps (1 vs 2 ranks)"
done
h5diff -d 1e-9 r1_newton.h5md r2_newton.h5md /particles/all/position/value /particles/all/position/value \
  || { echo "FAIL: newton: positions differ by more than 1e-9"; exit 1; }
{ h5diff -v -d 0 r1_newton.h5md r2_newton.h5md /particles/all/position/value /particles/all/position/value || true; } \
  | awk '/^\[ /{n++; d=$NF; if (d<0) d=-d; if (d>m) m=d} END {printf "half lists (newton): %d of 2592 position components differ, max |dx| = %.3g sigma (tolerance 1e-9)\n", n, m}'
for q in position force; do
  h5diff -d 1e-9 r1_full.h5md r1_newton.h5md /particles/all/$q/value /particles/all/$q/value > /dev/null \
    || { echo "FAIL: half lists (md_newton) against full lists, 1 rank: $q differs by more than 1e-9"; exit 1; }
  { h5diff -v -d 0 r1_full.h5md r1_newton.h5md /particles/all/$q/value /particles/all/$q/value || true; } \
    | awk -v q=$q '/^\[ /{n++; d=$NF; if (d<0) d=-d; if (d>m) m=d} END {printf "half vs full lists, 1 rank: %d of 5184 %s components differ, max %.3g (tolerance 1e-9)\n", n, q, m}'
done
