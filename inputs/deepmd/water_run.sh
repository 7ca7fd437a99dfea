#!/bin/bash
# The water run of docs/deepmd.md (NOT a test: about 4.5 hours on two cores; checkpoints every 2000 steps).
#   inputs/deepmd/water_run.sh [extra -deepmd_* options, e.g. -deepmd_restart build/deepmd/water_ckpt.h5]
# Imports DeePMD-kit's water data (train data_0..2, validate data_3), trains with inputs/deepmd/water.yaml,
# then prints dp-test RMSEs of the saved model, plain and tabulated.
set -e
cd "$(dirname "$0")/../.."
export OPENBLAS_NUM_THREADS=1   # one core per rank; OpenBLAS threads only spin on a shared machine
# This VM hides its CPU model: OpenBLAS 0.3.21 would fall back to SSE3 kernels. Name the core type:
# SkylakeX where AVX-512 is present (a water training step 0.25-0.31 s against 0.33 s with Haswell, the
# AVX2 kernels), else Haswell (both engines of the benchmark get the same).
grep -q avx512f /proc/cpuinfo && ct=SkylakeX || ct=Haswell
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$ct}
DATA=${WATER_DATA:-tests/data/water_dft}
mkdir -p build/deepmd
make -s bin/surge
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
bin/surge dataset import build/deepmd/water_train.h5 $DATA/data_0 $DATA/data_1 $DATA/data_2
bin/surge dataset import build/deepmd/water_3.h5 $DATA/data_3
/usr/bin/time -v mpiexec -n 2 bin/surge train inputs/deepmd/water.yaml "$@" 2>&1 | tee build/deepmd/water_train.log
# plain nets (with the per-frame detail files for the parity plots), then tabulated: the same RMSEs
bin/surge model test build/deepmd/water_model.h5 build/deepmd/water_3.h5 -detail build/deepmd/water_parity | tee build/deepmd/water_test.log
bin/surge model compress build/deepmd/water_model.h5 build/deepmd/water_model_compressed.h5 -step 0.01
bin/surge model test build/deepmd/water_model_compressed.h5 build/deepmd/water_3.h5 | tee -a build/deepmd/water_test.log
/usr/bin/python3 inputs/deepmd/plot_water.py build/deepmd docs/deepmd_water.png build/deepmd/water_lcurve.txt:2
# Before 2026-11-24 the model of docs/deepmd.md came from eight stages run across sessions (each continuing
# from the previous model with init_model or restart, on 1 then 2 ranks, float64 then float32); their
# commands are in this file's git history and their results in docs/deepmd.md ("Earlier staged runs").
# Their models did not survive a machine change; the single run above replaces them. The model shipped in
# inputs/deepmd/models/water.h5 is made from one of its checkpoints by inputs/deepmd/models/make_water.sh.
