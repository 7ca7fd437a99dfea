#!/bin/bash
# Spatial vs data split of one training step of a 3-layer 64^3 conv stack (8 channels, f32) on 1 and
# 2 ranks (figures, not pass/fail; see docs/parallel.md):
#   strong scaling: global batch 2 on 1 rank, on 2 ranks as 2 data groups, and as 2 spatial ranks
#                   (halo overlapped with the interior, and blocking for comparison)
#   weak scaling:   batch 1 per rank (data) / one 64x64x128 sample is not run: 1 sample on 2 spatial
#                   ranks is strong scaling of a single sample, listed too
# Efficiency = T(1 rank) / (2 T(2 ranks)) for the same global batch.
#   tests/bench/parallel/run.sh [STEPS]
set -e
cd "$(dirname "$0")/../../.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
make -s -C surrogates/parallel bench-bin >/dev/null
B=surrogates/parallel/build/bench_spatial
S=${1:-3}
out=$(mktemp)
run() { mpiexec -n $1 --oversubscribe --bind-to none $B $2 $3 $4 $5 $S | tee -a $out; }
run 1 1 1 2 overlap
run 2 2 1 2 overlap
run 2 1 2 2 overlap
run 2 1 2 2 blocking
run 1 1 1 1 overlap
run 2 1 2 1 overlap
awk '/step min/ { for (i = 1; i <= NF; i++) if ($i == "min") t = $(i + 1);
       key = $2 " " $5 " " $6; T[NR] = t; K[NR] = key; N[NR] = $5 }
     END { for (i = 1; i <= NR; i++) { if (K[i] ~ /^1x1/) base[N[i]] = T[i] }
           for (i = 1; i <= NR; i++) if (K[i] !~ /^1x1/)
             printf "%-24s efficiency vs 1 rank (same global batch): %.0f%%\n", K[i], 100 * base[N[i]] / (2 * T[i]) }' $out
rm -f $out
