#!/usr/bin/env bash
# The "dft" solver from decks (surge run): Si64 dense vs the submatrix method with a converged
# pattern (eps_filter 1e-4, pattern_its 12: the pattern covers the whole 64-atom cell, so the
# result must equal dense to round-off, |dE| < 1e-8 eV/atom), and the CP2K water matrices by
# submatrices vs dense (|dE| < 1e-6 Hartree per molecule at eps_filter 1e-5).  Restart from the
# checkpoint must reproduce the energy (a finished run is left alone; continued, it keeps the energy).
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
. "$root/tests/lib/num.sh"
# the energy of the run's "dft: ... E = VALUE UNIT" line: a number, or the test fails
e() { sg_grep_num "energy in $1" "$1" '^dft: .*, E = ([^ ]+) '; }
$SURGE run $root/inputs/dft/si64.yaml -sim_output d > d.log 2>&1
$SURGE run $root/inputs/dft/si64.yaml -sim_output s -dft_method submatrix -dft_eps_filter 1e-4 -dft_pattern_its 12 -dft_cluster 8 > s.log 2>&1
# restarting the finished run changes nothing; continuing it (one more step) reports the restored energy
[ ! -e d.xmf ] || { echo "a run without field snapshots wrote an XDMF sidecar"; exit 1; }
sum0=$(md5sum d.h5 d.chk.h5)
$SURGE run $root/inputs/dft/si64.yaml -sim_output d -restart d.chk.h5 > c.log 2>&1
grep -q "already complete" c.log && [ "$(md5sum d.h5 d.chk.h5)" = "$sum0" ] || { echo "restart of a finished run changed files"; exit 1; }
$SURGE run $root/inputs/dft/si64.yaml -sim_output d -restart d.chk.h5 -sim_max_steps 2 -sim_t_end 2 > r.log 2>&1
ed=$(e d.log)
es=$(e s.log)
er=$(e r.log)
echo "Si64: dense $ed eV, submatrix (converged pattern) $es eV, restarted $er eV"
awk -v a="$ed" -v b="$es" -v c="$er" 'BEGIN { if ((a-b)/64 > 1e-8 || (b-a)/64 > 1e-8 || a != c) exit 1 }' || { echo "FAIL: Si64 dense/submatrix differ by more than 1e-8 eV/atom, or the restart changed the energy"; exit 1; }
cd "$root"
$SURGE run inputs/dft/water_csr.yaml -sim_output $tmp/w > $tmp/w.log 2>&1
$SURGE run inputs/dft/water_csr.yaml -sim_output $tmp/wd -dft_method dense > $tmp/wd.log 2>&1
ew=$(e $tmp/w.log)
ewd=$(e $tmp/wd.log)
echo "water (32 H2O): submatrix $ew Ha, dense $ewd Ha"
awk -v a="$ew" -v b="$ewd" 'BEGIN { if ((a-b)/32 > 1e-6 || (b-a)/32 > 1e-6) exit 1 }' || { echo "FAIL: water submatrix vs dense differ by more than 1e-6 Ha per molecule"; exit 1; }
echo PASS
