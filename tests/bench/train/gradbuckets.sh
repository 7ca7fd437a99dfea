#!/bin/bash
# ZeRO stage 2 with the gradient by buckets (-deepmd_shard_bucket_bytes B, surrogates/train/zerograd.c)
# on the Deep Potential water model (inputs/deepmd/water.yaml: 1,027,082 float32 parameters, global
# batch 4) for NSTEPS steps on 1, 2 and 4 ranks, B = 0 (the whole slab, reduce-scattered after
# backward) and each B given: the start-up line (memory against ZeRO's formula, bytes per step) and the
# end-of-run line (the gradient's block + the most bucket bytes open at once, the buckets and bytes sent
# per step), and the step time from -log_view. Figures, not pass/fail (docs/parallel.md, "The gradient
# by buckets").
#   tests/bench/train/gradbuckets.sh [NSTEPS] [B ...]     (default 3 steps; B 65536 1048576 16777216)
set -e
cd "$(dirname "$0")/../../.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
N=${1:-3}
shift || true
BS=("$@")
[ ${#BS[@]} -gt 0 ] || BS=(65536 1048576 16777216)
DATA=${WATER_DATA:-tests/data/water_dft}
B=build/bench/train
mkdir -p $B
[ -s $B/water_0.h5 ] || bin/surge dataset import $B/water_0.h5 $DATA/data_0 > /dev/null
for np in 1 2 4; do
  for bb in 0 "${BS[@]}"; do
    log=$B/gradb.$np.$bb.log
    mpiexec -n $np --bind-to none --oversubscribe bin/surge train inputs/deepmd/water.yaml -deepmd_data $B/water_0.h5 -deepmd_valid_data "" \
      -deepmd_numb_steps $N -deepmd_disp_freq $N -deepmd_save_freq 0 -deepmd_save_ckpt "" -deepmd_lcurve "" -deepmd_stat_frames 10 \
      -deepmd_batch_size 4 -deepmd_shard 2 -deepmd_shard_bucket_bytes $bb -train_output $B/gradb -log_view > $log 2>&1
    echo "# ranks $np B $bb (load $(cut -d' ' -f1-3 /proc/loadavg))"
    grep -E "ZeRO stage 2" $log | sed -e 's/^deepmd: //' | cut -c1-400
    awk -v n=$N '/^SgTrainStep /{printf "step %.3f s (max over ranks, mean of %d)\n", $4/n, n}' $log
  done
done
