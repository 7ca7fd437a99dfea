#!/bin/bash
# Scaling of hybrid data x spatial training on this machine (figures, not pass/fail; docs/parallel.md).
#   tests/bench/parallel/run.sh [ROUNDS] [OUT]      (default 5 rounds, OUT build/bench/parallel)
# Two models (tests/bench/parallel/test_bench_grid.c): the 3-layer conv stack on 64^3 samples (float32)
# and the MeshfreeFlowNet encoder at the paper's widths on low-res crops 8 x 64 x 64 (float64), and the
# encoder on a larger 64^3 crop (strong scaling, batch 2: 1x1 | 2x1 | 1x2 overlapped | 1x2 blocking). For each:
#   strong scaling, global batch 2:  1x1 | 2x1 data | 1x2 spatial (overlapped halo) | 1x2 blocking halo
#   strong scaling, one sample:      1x1 | 1x2 spatial
#   weak scaling:                    1x1 one sample -> 2x1 two samples (data) | 1x2 one sample twice as
#                                    deep (spatial: 128 x 64 x 64, or a crop 8 x 128 x 64)
#   hybrid, batch 4:                 1x1 | 2x2 (4 processes on the 2 cores: efficiency per core)
# Efficiency: strong T(1) / (p T(p)), weak T(1) / T(p), p = cores used (2). Every configuration runs
# ROUNDS times in alternating order; the median over rounds of each run's median step is reported,
# with the load average at each round (the machine is shared). Then the kernel rates and the ping-pong
# the performance model needs, and the model itself (perfmodel.py, which writes the figures).
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_py parallel matplotlib python3-matplotlib # perfmodel.py's figures
ROOT=$PWD
R=${1:-5}
OUT=${2:-build/bench/parallel}
mkdir -p $OUT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
B=build/tests/test_bench_grid
[ -x $B ] || make -s $B || { echo "run.sh: cannot build $B (make $B)"; exit 1; }
M="mpiexec --bind-to none --oversubscribe -n"
CONFIGS=(
  "1 stack 1 1 2 64 64 64" "2 stack 2 1 2 64 64 64" "2 stack 1 2 2 64 64 64" "2 stack 1 2 2 64 64 64 -chunks 0"
  "1 stack 1 1 1 64 64 64" "2 stack 1 2 1 64 64 64" "2 stack 2 1 2 64 64 64" "2 stack 1 2 1 128 64 64"
  "1 stack 1 1 4 64 64 64" "4 stack 2 2 4 64 64 64"
  "1 mffn 1 1 2 8 64 64" "2 mffn 2 1 2 8 64 64" "2 mffn 1 2 2 8 64 64" "2 mffn 1 2 2 8 64 64 -chunks 0"
  "1 mffn 1 1 1 8 64 64" "2 mffn 1 2 1 8 64 64" "2 mffn 1 2 1 8 128 64"
  "1 mffn 1 1 4 8 64 64" "4 mffn 2 2 4 8 64 64"
  "1 mffn 1 1 2 64 64 64" "2 mffn 2 1 2 64 64 64" "2 mffn 1 2 2 64 64 64" "2 mffn 1 2 2 64 64 64 -chunks 0"
)
RES=$OUT/results.txt
: > $RES
for r in $(seq 1 $R); do
  echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a $RES
  for c in "${CONFIGS[@]}"; do
    set -- $c
    n=$1; shift
    $M $n $B "$@" -steps 3 | grep '^RESULT' | sed "s/\$/ round=$r/" >> $RES
  done
done
echo "# layer times and ping-pong, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $RES
/usr/bin/python3 tests/bench/parallel/perfmodel.py layers $OUT/layers.txt
$M 1 $B layers $OUT/layers.txt -steps 5 | grep '^RESULT' >> $RES
$M 2 $B layers $OUT/layers.txt -steps 5 | grep '^RESULT' >> $RES   # two processes side by side: the time each gets
$M 2 $B pingpong | grep '^RESULT' >> $RES
$M 2 $B stack 1 2 1 64 64 64 -steps 3 -trace $OUT/timeline_stack | grep '^RESULT' > /dev/null
$M 2 $B mffn 1 2 1 8 64 64 -steps 3 -trace $OUT/timeline_mffn | grep '^RESULT' > /dev/null
/usr/bin/python3 tests/bench/parallel/perfmodel.py model $RES $OUT
