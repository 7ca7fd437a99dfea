#!/bin/bash
# Spatial vs data split of one training step of a 3-layer conv stack (3x3x3, 8 channels, f32) on 1 and
# 2 ranks (figures, not pass/fail; see docs/parallel.md). Grids G x S (data groups x spatial ranks):
#   strong scaling, global batch 2 of 64^3: 1x1; 2x1 (data); 1x2 (spatial, halo overlapped with the
#     interior, and blocking for comparison); and one 64^3 sample on 1x1 and 1x2
#   weak scaling: one 64^3 sample per rank (1x1 batch 1 -> 2x1 batch 2), and one sample twice as deep
#     on 2 spatial ranks (1x1 64^3 -> 1x2 128x64x64)
# Efficiency: strong T1 / (2 T2) for the same work; weak T1 / T2 for twice the work on twice the ranks.
#   tests/bench/parallel/run.sh [STEPS]
set -e
cd "$(dirname "$0")/../../.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
make -s -C surrogates/parallel bench-bin >/dev/null
B=surrogates/parallel/build/bench_spatial
S=${1:-3}
t() { # ranks G S N mode depth -> prints the line, echoes nothing else
  mpiexec -n $1 --oversubscribe --bind-to none $B $2 $3 $4 $5 $S $6 | tee /dev/stderr | sed 's/.*step min \([0-9.]*\) s.*/\1/'
}
s1=$(t 1 1 1 2 overlap 64); d2=$(t 2 2 1 2 overlap 64); p2=$(t 2 1 2 2 overlap 64); b2=$(t 2 1 2 2 blocking 64)
one=$(t 1 1 1 1 overlap 64); p1=$(t 2 1 2 1 overlap 64); deep=$(t 2 1 2 1 overlap 128)
awk -v s1=$s1 -v d2=$d2 -v p2=$p2 -v b2=$b2 -v one=$one -v p1=$p1 -v deep=$deep 'BEGIN {
  printf "strong, batch 2 of 64^3:  data 2x1 %.0f%%   spatial 1x2 overlap %.0f%%   spatial 1x2 blocking %.0f%%\n", 100*s1/(2*d2), 100*s1/(2*p2), 100*s1/(2*b2)
  printf "strong, one 64^3 sample:  spatial 1x2 %.0f%%\n", 100*one/(2*p1)
  printf "weak:  data 2x1 (1 -> 2 samples) %.0f%%   spatial 1x2 (64^3 -> 128x64x64) %.0f%%\n", 100*one/d2, 100*one/deep }'
