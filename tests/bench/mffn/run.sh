#!/bin/bash
# MeshfreeFlowNet benchmark (figures, not pass/fail): one training crop at the paper's size, one core.
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_py mffn matplotlib python3-matplotlib # swap.py's figure
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
build/tests/test_bench_mffn 512 3
# MeshfreeFlowNet swapped in for the fine solve of a coarse Rayleigh-Benard run (docs/mffn.md "Swap")
/usr/bin/python3 tests/bench/mffn/swap.py
