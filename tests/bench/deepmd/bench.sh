#!/bin/bash
# Deep Potential benchmarks (figures, not pass/fail). One core: OPENBLAS_NUM_THREADS=1, torch 1 thread.
#   tests/bench/deepmd/bench.sh [MODEL.h5]     (default: the water model of inputs/deepmd/water_run.sh
#                                             if present, else a water-sized model with random weights)
# 1. inference us/step/atom for water, 192 atoms and 12,288 atoms (4x4x4 replicas), nets vs tabulated
#    embedding (step 0.01), and peak RSS;
# 2. training throughput (frames/s, batch 1, DeePMD-kit water hyper-parameters) of surge vs the same
#    model in PyTorch on CPU (tests/bench/deepmd/dp_torch.py), same machine, same script, the same
#    work timed the same way: the energy + force loss with DeePMD-kit's water start prefactors
#    (0.02/N dE^2 + 1000/(3N) |dF|^2), forward + forces + backward + Adam, each step timed alone and
#    the median of steps 2..NSTEPS reported; both engines one thread and the allocator settings of
#    tests/bench/engine_env.sh. (surge's step also rebuilds the environment matrix and neighbour
#    list of the frame, which dp_torch.py builds once before timing: if anything, surge is charged more.)
#    PyTorch is the reference: without it the benchmark stops with a message.
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_py deepmd torch python3-torch # the training reference, dp_torch.py
make -s bin/surge build/tests/test_deepmd_tool build/tests/test_deepmd_bench >/dev/null || { echo "bench deepmd: cannot build bin/surge build/tests/test_deepmd_tool build/tests/test_deepmd_bench (run ./configure first)"; exit 2; }
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
. tests/bench/engine_env.sh
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg); MALLOC_MMAP_THRESHOLD_=$MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_=$MALLOC_TRIM_THRESHOLD_"
# This VM hides its CPU model: OpenBLAS 0.3.21 would fall back to SSE3 kernels. Name the core type:
# SkylakeX where AVX-512 is present (a water training step 0.25-0.31 s against 0.33 s with Haswell, the
# AVX2 kernels), else Haswell (both engines of the benchmark get the same).
grep -q avx512f /proc/cpuinfo && ct=SkylakeX || ct=Haswell
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$ct}
DATA=${WATER_DATA:-tests/data/water_dft}
B=build/bench/deepmd; mkdir -p $B
[ -s $B/water_0.h5 ] || build/tests/test_deepmd_tool import $B/water_0.h5 $DATA/data_0 > /dev/null
MODEL=${1:-build/deepmd/water_model.h5}
if [ ! -s "$MODEL" ]; then MODEL=$B/random_water.h5; build/tests/test_deepmd_bench mkmodel $B/water_0.h5 $MODEL; fi
echo "== inference (model $MODEL), 1 core"
build/tests/test_deepmd_bench infer $MODEL $B/water_0.h5 1 20 0.01
build/tests/test_deepmd_bench infer $MODEL $B/water_0.h5 4 2 0.01
echo "== training throughput, batch 1, water (192 atoms), 1 core"
ours=$(build/tests/test_deepmd_bench train $B/water_0.h5 ${NSTEPS:-10} 1)
echo "$ours"
S=$DATA/data_0/set.000
ref=$(/usr/bin/python3 tests/bench/deepmd/dp_torch.py $S/coord.npy $S/box.npy $S/energy.npy $S/force.npy $DATA/data_0/type.raw ${NSTEPS:-10}) || {
  echo "bench deepmd: the reference dp_torch.py failed: stopping"; exit 2; }
echo "$ref"
a=$(sed -n 's/^train full batch 1: \([0-9.]*\) s\/step.*/\1/p' <<< "$ours")
b=$(sed -n 's/^torch full batch 1: \([0-9.]*\) s\/step.*/\1/p' <<< "$ref")
[ -n "$a" ] && [ -n "$b" ] || { echo "bench deepmd: no s/step figure from surge ('$a') or torch ('$b'): stopping"; exit 2; }
awk -v a="$a" -v b="$b" 'BEGIN{ printf "training step surge / torch: %.2f (%.3f / %.3f s)\n", a / b, a, b }'
