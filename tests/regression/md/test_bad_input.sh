#!/usr/bin/env bash
# Bad input fails with a clear message naming the cause (and the run writes no output file):
# overlapping atoms, a cell thinner than 2 (cutoff + skin), an unknown element, an unknown atom type
# in a data file, negative step counts/cadences, an unregistered force provider, an atom far outside
# the box; and a step so large the atoms leave the box fails with one line at run time.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
deck=$root/inputs/md/lj_nve.yaml
fails=0
expect() { # message-regex, args...: exit 1, exactly one "surge: error:" line holding the message, no traceback
  local re=$1 rc; shift
  "$SURGE" run "$@" > out.log 2>&1; rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL (ran): $*"; fails=$((fails+1)); return; fi
  if [ $rc -ne 1 ] || [ "$(grep -c '^surge: error:' out.log)" != 1 ] || grep -qE "PETSC ERROR|runtime error|MPI_ABORT" out.log; then
    echo "FAIL (exit $rc, $(grep -c '^surge: error:' out.log) error lines; want exit 1 and one line): $*"; tail -3 out.log; fails=$((fails+1)); return; fi
  if ! grep '^surge: error:' out.log | grep -Eq "$re"; then echo "FAIL (message): $* -> $(grep -m1 error out.log)"; fails=$((fails+1)); return; fi
  if [ -e bad.h5 ]; then echo "FAIL (wrote output): $*"; fails=$((fails+1)); rm -f bad.h5; return; fi
  echo "ok: $(grep -m1 -E "$re" out.log | cut -c1-150)"
}
printf '3\nLattice="10 0 0 0 10 0 0 0 10" Properties=species:S:1:pos:R:3\n1 1 1 1\n1 5 5 5\n1 1 1 1.0000001\n' > overlap.xyz
printf '2\nLattice="20 0 0 0 20 0 0 0 20" Properties=species:S:1:pos:R:3\nSi 1 1 1\nXx 5 5 5\n' > unknown.xyz
printf 'test\n\n2 atoms\n2 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\nMasses\n\n1 1.0\n2 1.0\n\nAtoms # atomic\n\n1 1 1 1 1\n2 3 5 5 5\n' > badtype.data
expect "atoms 1 and 3 overlap"                $deck -sim_output bad -md_lattice none -md_read_xyz overlap.xyz
expect "must be at least 2 \(cutoff \+ skin\)" $deck -sim_output bad -md_lattice_cells 3,3,3
expect "unknown element 'Xx'"                  $deck -sim_output bad -md_lattice none -md_read_xyz unknown.xyz -md_units metal -md_lj_cutoff 3 -md_skin 1
expect "unknown atom type 3"                   $deck -sim_output bad -md_lattice none -md_read_data badtype.data
expect "max_steps.*out of range"               $deck -sim_output bad -sim_max_steps -5
expect "md_thermo_every.*out of range"         $deck -sim_output bad -md_thermo_every -1
expect "md_neigh_every.*out of range"          $deck -sim_output bad -md_neigh_every 0
expect "no force provider 'nosuch' is registered" $deck -sim_output bad -md_forces nosuch
expect "md_lj_sigma: 2 values given for 1 atom types" $deck -sim_output bad -md_lj_sigma 1,2
printf '2\nLattice="10 0 0 0 10 0 0 0 10" Properties=species:S:1:pos:R:3\n1 1 1 1\n1 1e300 5 5\n' > far.xyz
expect "atom 2 is at .*more than 1e6 box lengths" $deck -sim_output bad -md_lattice none -md_read_xyz far.xyz
# a step so large that the atoms leave the box (dt 1e12): one clear line at the next neighbour-list
# build, not an integer overflow in the image counters (UBSan found it through the deck fuzzer)
"$SURGE" run $deck -sim_output big -sim_max_steps 3 -md_dt 1e12 > out.log 2>&1; rc=$?
if [ $rc -ne 1 ] || [ "$(grep -c '^surge: error:' out.log)" != 1 ] || ! grep -q "moved more than a box length" out.log || grep -qE "runtime error|PETSC ERROR|MPI_ABORT" out.log; then
  echo "FAIL (dt 1e12): rc $rc"; tail -3 out.log; fails=$((fails+1))
else echo "ok: $(grep -m1 '^surge: error:' out.log | cut -c1-150)"; fi
[ $fails -eq 0 ] || { echo "$fails bad-input case(s) failed"; exit 1; }
echo "all bad-input cases fail cleanly"
