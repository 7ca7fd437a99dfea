#!/usr/bin/env bash
# The same starting state in surge and in LAMMPS (Debian lmp): step-0 temperature, potential
# energy and pressure must agree to 1e-9 relative (both print >= 12 significant digits; the lattice
# sums are the same arithmetic up to summation order).  In lj units (fcc rho* = 0.8442, shifted LJ
# rc 2.5) and metal units (argon fcc a = 5.26 A, eps 0.0104 eV, sigma 3.4 A, rc 8.5 A, 100 K),
# which checks the unit constants (kB, mvv2e, nktv2p) and the pressure/virial convention; and a
# binary mixture from a data file (two masses, eps 1/0.5, sigma 1/0.88, Lorentz-Berthelot mixing).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
command -v lmp >/dev/null || { echo "FAIL: this test compares with LAMMPS, and lmp is not installed: run ./configure --install-deps (Debian package lammps)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
run_case() { # name, lammps units block, surge options
  local name=$1 lin=$2; shift 2
  printf '%s\nthermo_style custom step temp pe press\nthermo_modify norm no format float %%.15g\nrun 0\n' "$lin" > in.$name
  lmp -in in.$name -log none -screen lmp.$name.out >/dev/null
  awk '/^ *Step/{getline; print $2, $3, $4; exit}' lmp.$name.out > ref.$name
  local deck=$1; shift
  "$SURGE" run "$root/inputs/md/$deck" -sim_output "$tmp/s_$name" -sim_max_steps 0 -md_thermo_norm false "$@" > s.$name.out
  awk '/md thermo: +0 /{print $4, $5, $8}' s.$name.out > ours.$name
  echo "$name: LAMMPS (T PE P) $(cat ref.$name) | surge $(cat ours.$name)"
  /usr/bin/python3 - ref.$name ours.$name <<'PY'
import sys
a = [float(x) for x in open(sys.argv[1]).read().split()]
b = [float(x) for x in open(sys.argv[2]).read().split()]
assert len(a) == 3 and len(b) == 3, (a, b)
for name, x, y in zip(("T", "PE", "P"), a, b):
    rel = abs(x - y) / max(abs(x), 1e-300)
    print(f"  {name}: rel diff {rel:.2e}")
    assert rel < 1e-9, f"{name} differs: LAMMPS {x} surge {y}"
PY
}
run_case lj "units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_modify shift yes
pair_coeff 1 1 1.0 1.0 2.5" lj_nve.yaml -md_lattice_cells 6,6,6
run_case metal "units metal
atom_style atomic
lattice fcc 5.26
region box block 0 5 0 5 0 5
create_box 1 box
create_atoms 1 box
mass 1 39.948
velocity all create 100.0 87287 loop geom
pair_style lj/cut 8.5
pair_modify shift yes
pair_coeff 1 1 0.0104 3.4 8.5" ar_metal.yaml
# binary mixture (read from a data file): Lorentz-Berthelot mixing, per-type masses, 2-type kernel
/usr/bin/python3 - <<'PY'
a = (4 / 0.8442) ** (1 / 3); n = 6
b = [(0, 0, 0), (.5, .5, 0), (.5, 0, .5), (0, .5, .5)]
X = [((i + u) * a, (j + v) * a, (k + w) * a) for k in range(n) for j in range(n) for i in range(n) for (u, v, w) in b]
with open("mix.data", "w") as f:
    f.write("binary LJ\n\n%d atoms\n2 atom types\n\n0 %.16g xlo xhi\n0 %.16g ylo yhi\n0 %.16g zlo zhi\n\nMasses\n\n1 1.0\n2 2.0\n\nAtoms # atomic\n\n" % (len(X), n * a, n * a, n * a))
    for i, x in enumerate(X):
        f.write("%d %d %.16g %.16g %.16g\n" % (i + 1, 1 + (i * 7 % 3 == 0), *x))
PY
run_case mix "units lj
atom_style atomic
read_data mix.data
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_modify shift yes mix arithmetic
pair_coeff 1 1 1.0 1.0
pair_coeff 2 2 0.5 0.88" lj_nve.yaml -md_lattice none -md_read_data mix.data -md_lj_epsilon 1,0.5 -md_lj_sigma 1,0.88
echo "PASS"
