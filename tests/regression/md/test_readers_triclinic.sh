#!/usr/bin/env bash
# Readers and triclinic cells.  One fcc LJ crystal (rho* = 0.8442) given five ways: the lattice
# builder, extended XYZ and LAMMPS data of the cubic cell, and the primitive rhombohedral cell
# (343 atoms) as general-triclinic extended XYZ and as LAMMPS restricted-triclinic data (tilts
# xy xz yz).  The static energy per atom must equal the exact lattice sum (make_structures.py,
# direct sum over lattice vectors) to 1e-11 relative for every representation.  Then 100 NVE steps
# in the triclinic cell (T* = 1.0) on 1 and 2 ranks: bit-identical trajectories.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
MPIEXEC=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
exact=$(/usr/bin/python3 "$root/tests/regression/md/make_structures.py" .)
deck=$root/inputs/md/lj_nve.yaml
for src in "-md_lattice fcc -md_lattice_cells 6,6,6" "-md_lattice none -md_read_xyz cubic.xyz" "-md_lattice none -md_read_data cubic.data" \
           "-md_lattice none -md_read_xyz prim.xyz" "-md_lattice none -md_read_data prim.data"; do
  pe=$("$SURGE" run $deck -sim_output s -sim_max_steps 0 -md_velocity_temperature 0 $src | awk '/md thermo: +0 /{print $5}')
  /usr/bin/python3 -c "
import sys
pe, ex = float('$pe'), float('$exact')
rel = abs(pe - ex) / abs(ex)
print(f'{\"$src\":45s} PE/atom {pe:.12f}  exact {ex:.12f}  rel {rel:.1e}')
sys.exit(0 if rel < 1e-11 else 1)" || { echo "FAIL: lattice energy differs"; exit 1; }
done
o="-md_lattice none -md_read_data prim.data -md_velocity_temperature 1.0 -md_traj_every 100 -md_thermo_every 100"
"$SURGE" run $deck -sim_output t1 -md_traj_file t1.h5md $o > t1.log
$MPIEXEC "$SURGE" run $deck -sim_output t2 -md_traj_file t2.h5md $o > t2.log
grep -q "ranks 1x1x2\|ranks 1x2x1\|ranks 2x1x1" t2.log || { echo "2-rank run did not decompose"; cat t2.log; exit 1; }
for q in position velocity force image; do
  h5diff t1.h5md t2.h5md /particles/all/$q/value /particles/all/$q/value || { echo "FAIL: triclinic 1 vs 2 ranks: $q differs"; exit 1; }
done
echo "triclinic cell: 100 NVE steps bit-identical on 1 and 2 ranks"
