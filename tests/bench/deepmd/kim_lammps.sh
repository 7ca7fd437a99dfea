#!/bin/bash
# LAMMPS + KIM (pair_style kim SURGE_DP_water_c) against surge's own MD on the 1,536-atom water deck
# (inputs/deepmd/water_md.yaml: 0.5 fs, NVE from 300 K, the tabulated water model), both on 1 and 2
# MPI ranks, OPENBLAS_NUM_THREADS=1. Figures, not pass/fail: wall time per MD step (LAMMPS: its "Loop
# time"; surge: the loop time of its md summary line), and the load average, which on the shared machine
# moves them. The same model file and tabulation for both (surge model compress, step 0.01).
#   tests/bench/deepmd/kim_lammps.sh [STEPS]     (default 100; nice'd)
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_cmd deepmd-kim lmp lammps
pkg-config --exists libkim-api || { echo "bench deepmd-kim: needs the KIM API (Debian libkim-api-dev): ./configure --install-deps" >&2; exit 2; }
STEPS=${1:-100}
B=$PWD/build/bench/deepmd_kim
rm -rf $B
mkdir -p $B/col/md $B/col/pm
export KIM_API_MODEL_DRIVERS_DIR=$B/col/md KIM_API_PORTABLE_MODELS_DIR=$B/col/pm OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s kim-install > /dev/null
bin/surge model compress inputs/deepmd/models/water.h5 $B/water_c.h5 > /dev/null
make -s kim-model KIM_MODEL_NAME=SURGE_DP_water_c KIM_MODEL_FILE=$B/water_c.h5 KIM_OUT=$B/col/pm > /dev/null
/usr/bin/python3 tests/regression/deepmd/kim_files.py setup inputs/deepmd/water_1536.xyz O,H $B/w.txt $B/w.data
cat > $B/nve.lmp <<'LMP'
units metal
atom_style atomic
boundary p p p
read_data w.data
mass 1 15.999
mass 2 1.008
pair_style kim SURGE_DP_water_c
pair_coeff * * O H
velocity all create 300 2024 mom yes dist gaussian
timestep 0.0005
fix 1 all nve
thermo ${steps}
run ${steps}
LMP
cp inputs/deepmd/water_1536.xyz $B/
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg) (2 cores shared with other jobs); $STEPS steps, 1536 atoms"
for np in 1 2; do
  run=""
  [ $np = 2 ] && run="mpiexec -n 2 --oversubscribe"
  (cd $B && nice $run lmp -in nve.lmp -var steps $STEPS -log lmp_$np.log > /dev/null)
  tl=$(awk '/^Loop time of/{print $4}' $B/lmp_$np.log)
  nice $run bin/surge run inputs/deepmd/water_md.yaml -sim_max_steps $STEPS -md_deepmd_models $B/water_c.h5 -md_deepmd_compress false \
    -md_thermo_every $STEPS -sim_output $B/surge_$np > $B/surge_$np.log
  ts=$(sed -n 's/.* atoms in \([0-9.]*\) s (loop time).*/\1/p' $B/surge_$np.log | tail -1)
  printf "%d rank(s): LAMMPS+KIM %.1f ms/step (loop time %.2f s); surge MD %.1f ms/step (loop time %.2f s); load now %s\n" \
    $np $(echo "1000 * $tl / $STEPS" | bc -l) $tl $(echo "1000 * $ts / $STEPS" | bc -l) $ts "$(cut -d' ' -f1 /proc/loadavg)"
done
