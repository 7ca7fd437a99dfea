#!/usr/bin/env bash
# Regenerates ref/lj_rdf_lammps.txt: g(r) of the LJ liquid at rho* = 0.8442, T* = 1.0 from Debian's
# LAMMPS (lmp, 29 Sep 2021), the reference for md_rdf_vs_lammps. Same protocol as
# inputs/md/lj_rdf.yaml: fcc 8x8x8 (2048 atoms) melted from T = 2.0, Nose-Hoover chain at T = 1.0
# (tdamp 0.5), 1000 steps equilibration, then g(r) (100 bins on [0, 2.5)) averaged over 200
# samples every 10 steps. lj/cut 2.5 shifted, skin 0.3, dt 0.005.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/in.rdf" <<'IN'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 8 0 8 0 8
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 2.0 4928459 loop geom
pair_style      lj/cut 2.5
pair_modify     shift yes
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 1 delay 0 check yes
timestep        0.005
fix             1 all nvt temp 1.0 1.0 0.5
thermo          500
run             1000
reset_timestep  0
compute         rdf all rdf 100
fix             2 all ave/time 10 200 2000 c_rdf[*] file rdf.txt mode vector
run             2000
IN
(cd "$tmp" && OMP_NUM_THREADS=1 lmp -in in.rdf -log none -screen none)
{
  echo "# g(r) of the LJ liquid rho*=0.8442 T*=1.0 (2048 atoms, 200 samples) from LAMMPS 29Sep2021 (lmp); made by lammps_rdf_ref.sh"
  echo "# r g"
  awk 'NF == 4 && $1 !~ /#/ {printf "%.6f %.8f\n", $2, $3}' "$tmp/rdf.txt"
} > "$here/ref/lj_rdf_lammps.txt"
echo "wrote $here/ref/lj_rdf_lammps.txt ($(grep -vc '^#' "$here/ref/lj_rdf_lammps.txt") bins)"
