#!/bin/bash
# run.sh -- the scaling runs of tests/bench/parallel/run.sh on a machine without PETSc and MPI, from
# the bundle that bundle.sh made (bench.tar.xz beside this script); figures, not pass/fail.
#   DIR/run.sh [ROUNDS] [RESULTS]          (default 3 rounds, results to ./results.txt)
# Open MPI as tests/bench/device/mpienv.sh sets it up (nothing is written outside /tmp). Each rank is
# bound to its own core: on a machine with more cores than ranks no core is shared, unlike on the VM.
set -u
D=$(cd "$(dirname "$0")" && pwd)
R=${1:-3}
RES=${2:-results.txt}
W=/tmp/sgbench
. $D/mpienv.sh
sg_unpack $D/bench.tar.xz $W || exit 2
B=$W/b/bin/test_bench_grid
M="mpiexec --bind-to core --map-by core -n"
sg_mpi $W "$M 2 $B stack 1 2 2 16 16 16 -steps 1 2>&1 | grep -q '^RESULT'" || exit 2
mode=$SG_MPI_MODE
CONFIGS=(
  "1 mffn 1 1 2 64 64 64" "2 mffn 2 1 2 64 64 64" "2 mffn 1 2 2 64 64 64" "2 mffn 1 2 2 64 64 64 -chunks 0"
  "1 mffn 1 1 2 8 64 64" "2 mffn 2 1 2 8 64 64" "2 mffn 1 2 2 8 64 64" "2 mffn 1 2 2 8 64 64 -chunks 0"
  "1 mffn 1 1 1 8 64 64" "2 mffn 2 1 2 8 64 64"
  "1 stack 1 1 2 64 64 64" "2 stack 2 1 2 64 64 64" "2 stack 1 2 2 64 64 64" "2 stack 1 2 2 64 64 64 -chunks 0"
)
: > $RES
echo "# $(nproc --all) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), ranks bound to cores; $mode" | tee -a $RES
for r in $(seq 1 $R); do
  echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a $RES
  for c in "${CONFIGS[@]}"; do
    set -- $c
    n=$1; shift
    $M $n $B "$@" -steps 3 | grep '^RESULT' | sed "s/\$/ round=$r/" | tee -a $RES
  done
done
