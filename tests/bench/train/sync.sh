#!/bin/bash
# Gradient sync of SgTrainer on 2 ranks (figures, not pass/fail): the Deep Potential on DeePMD-kit's
# water data (inputs/deepmd/water.yaml model: 192 atoms, float32) for NSTEPS steps (global batch 2: one frame per rank) with the bucketed
# sync (1 MiB buckets, started during backward) and with one blocking allreduce after backward. Prints
# per step: the whole step, backward, and the time left waiting in the sync after backward
# (SgTrainSync), from -log_view (max over ranks), plus the buckets and how many started early.
#   tests/bench/train/sync.sh [NSTEPS]
set -e
cd "$(dirname "$0")/../../.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
N=${1:-20}
DATA=${WATER_DATA:-tests/data/water_dft}
B=build/bench/train; mkdir -p $B
[ -s $B/water_0.h5 ] || bin/surge dataset import $B/water_0.h5 $DATA/data_0 > /dev/null
for sync in bucketed allreduce; do
  mpiexec -n 2 --oversubscribe bin/surge train inputs/deepmd/water.yaml -deepmd_data $B/water_0.h5 -deepmd_valid_data "" \
    -deepmd_numb_steps $N -deepmd_disp_freq $N -deepmd_save_freq 0 -deepmd_save_ckpt "" -deepmd_lcurve "" -deepmd_stat_frames 10 -deepmd_batch_size 2 \
    -deepmd_sync $sync -train_output $B/water_$sync -log_view -info > $B/$sync.log 2>&1
  awk -v s=$sync -v n=$N '/^SgTrainStep /{st=$4} /^SgTrainBackward /{bw=$4} /^SgTrainSync /{sy=$4}
    END {printf "%-9s step %.1f ms, backward %.1f ms, sync wait after backward %.2f ms (per step, max over ranks)\n", s, 1e3*st/n, 1e3*bw/n, 1e3*sy/n}' $B/$sync.log
  grep -m1 -o "bucketed sync:.*" $B/$sync.log || true
done
