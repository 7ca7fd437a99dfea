#!/usr/bin/env bash
# LAMMPS LJ benchmark (bench/in.lj: fcc rho* = 0.8442, 20^3 cells = 32,000 atoms, T* = 1.44, lj/cut
# 2.5, skin 0.3, neigh every 20 check no, 100 NVE steps) with surge (inputs/md/lj_bench.yaml) and
# with Debian's LAMMPS (lmp) on the same input, in this one script, on 1 and 2 MPI ranks.
# Each configuration runs REPEAT times, alternating the two codes so both see the same machine
# load; the figure is the median loop time (LAMMPS: "Loop time"; surge: time inside the step calls,
# i.e. integration + neighbour lists + communication + forces, thermo at steps 0 and 100).
# surge runs twice: default full lists (bit-reproducible) and md_newton (half lists, as LAMMPS).
# Prints atom-steps/s and the ratio surge/LAMMPS (> 1: surge faster).  Figures, not pass/fail.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
(cd "$root" && make -s bin/surge >/dev/null) || { echo "bench md: cannot build bin/surge (run ./configure first)"; exit 2; }
SURGE=${SURGE:-$root/bin/surge}
REPEAT=${REPEAT:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
. "$root/tests/bench/require.sh"
bench_require_cmd md lmp lammps
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat > in.lj <<'IN'
# 3d Lennard-Jones melt (LAMMPS bench/in.lj)
variable	x index 1
variable	y index 1
variable	z index 1
variable	xx equal 20*$x
variable	yy equal 20*$y
variable	zz equal 20*$z
units		lj
atom_style	atomic
lattice		fcc 0.8442
region		box block 0 ${xx} 0 ${yy} 0 ${zz}
create_box	1 box
create_atoms	1 box
mass		1 1.0
velocity	all create 1.44 87287 loop geom
pair_style	lj/cut 2.5
pair_coeff	1 1 1.0 1.0 2.5
neighbor	0.3 bin
neigh_modify	delay 0 every 20 check no
fix		1 all nve
run		100
IN
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "LJ benchmark, 32000 atoms x 100 steps; $REPEAT runs each, median loop time; $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-14s %10s %14s %10s\n' ranks code loop_s atom-steps/s ratio
for np in 1 2; do
  run=""; [ $np -gt 1 ] && run="mpiexec -n $np --oversubscribe"
  : > s.$np; : > l.$np; : > n.$np; : > o.$np
  for r in $(seq $REPEAT); do
    $run "$SURGE" run "$root/inputs/md/lj_bench.yaml" -sim_output b$np -md_thermo_every 100 > s.log 2>&1
    grep -o 'in [0-9.]* s (loop time)' s.log | awk '{print $2}' >> s.$np
    $run "$SURGE" run "$root/inputs/md/lj_bench.yaml" -sim_output b$np -md_thermo_every 100 -md_newton > sn.log 2>&1
    grep -o 'in [0-9.]* s (loop time)' sn.log | awk '{print $2}' >> n.$np
    $run lmp -in in.lj -log none > l.log 2>&1
    awk '/^Loop time/{print $4}' l.log >> l.$np
    # LAMMPS's OPT package (lj/cut/opt): the fastest LJ pair style in Debian's build
    $run lmp -sf opt -in in.lj -log none > o.log 2>&1
    awk '/^Loop time/{print $4}' o.log >> o.$np
  done
  for f in s l n o; do [ -s $f.$np ] || { echo "bench md: no loop time from run '$f' on $np ranks (see $tmp)"; exit 2; }; done
  ts=$(median < s.$np); tl=$(median < l.$np); tn=$(median < n.$np); to=$(median < o.$np)
  awk -v np=$np -v ts="$ts" -v tl="$tl" -v tn="$tn" -v to="$to" 'BEGIN {
    printf "%-6d %-14s %10.3f %14.3e\n", np, "LAMMPS", tl, 3.2e6 / tl;
    printf "%-6d %-14s %10.3f %14.3e\n", np, "LAMMPS opt", to, 3.2e6 / to;
    printf "%-6d %-14s %10.3f %14.3e %9.2fx LAMMPS, %.2fx LAMMPS opt\n", np, "surge", ts, 3.2e6 / ts, tl / ts, to / ts;
    printf "%-6d %-14s %10.3f %14.3e %9.2fx LAMMPS, %.2fx LAMMPS opt\n", np, "surge newton", tn, 3.2e6 / tn, tl / tn, to / tn }'
  echo "       runs: surge $(tr '\n' ' ' < s.$np)| newton $(tr '\n' ' ' < n.$np)| LAMMPS $(tr '\n' ' ' < l.$np)| LAMMPS opt $(tr '\n' ' ' < o.$np)"
done
grep -h "thermo: *100 " s.log | sed 's/^/surge  /' || true
