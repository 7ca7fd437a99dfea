#!/usr/bin/env bash
# Regenerates ref/lj_npt_lammps.txt: the mean volume of 864 LJ atoms at T* = 1.0, P* = 1.0 under
# LAMMPS's fix langevin (damp 0.5) + fix press/berendsen iso (pdamp 0.5, modulus 10), started from
# fcc rho* = 0.8442: the same protocol as inputs/md/lj_npt.yaml; mean over steps 1500..4000
# (thermo every 50), with the standard deviation of the samples.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/in.npt" <<'IN'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 6 0 6 0 6
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 1.0 777 loop geom
pair_style      lj/cut 2.5
pair_modify     shift yes
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    every 1 delay 0 check yes
timestep        0.005
fix             1 all nve
fix             2 all langevin 1.0 1.0 0.5 48279
fix             3 all press/berendsen iso 1.0 1.0 0.5 modulus 10.0
thermo_style    custom step temp press vol
thermo          50
run             4000
IN
(cd "$tmp" && OMP_NUM_THREADS=1 lmp -in in.npt -log none -screen out.txt)
{
  echo "# LJ 864 atoms, T*=1 P*=1, Langevin + Berendsen (LAMMPS 29Sep2021 lmp), steps 1500..4000; made by lammps_npt_ref.sh"
  echo "# mean_volume std_volume mean_T mean_P"
  awk '$1 ~ /^[0-9]+$/ && NF == 4 && $1 >= 1500 {n++; v += $4; v2 += $4 * $4; t += $2; p += $3}
       END {printf "%.4f %.4f %.5f %.5f\n", v / n, sqrt(v2 / n - (v / n) ^ 2), t / n, p / n}' "$tmp/out.txt"
} > "$here/ref/lj_npt_lammps.txt"
cat "$here/ref/lj_npt_lammps.txt"
