#!/bin/bash
# The training options of issue 38 measured against their model (figures, not pass/fail; docs/parallel.md
# "The options at scale"): the Deep Potential on DeePMD-kit's water data (inputs/deepmd/water.yaml:
# 1,027,082 float32 parameters, global batch 4) for NSTEPS steps on 1, 2 and 4 ranks with plain data
# parallelism (Adam and Lion), ZeRO stages 1, 2 and 3 (Adam), stages 2 and 3 by buckets of >= 64 KiB (adam2b: the
# gradient; adam3b: the parameters too; -deepmd_shard_bucket_bytes 65536, 8 buckets, at most 3 gradient buckets open), Lion Cub (1-bit votes, all-gathered and summed by the vote allreduce) and SDP4Bit (stage 2 in 4 bits; stage 3 with 4-bit gradients; one rank a node). For each run:
# the start-up line (memory and bytes per step the trainer counts) and the step's parts from -log_view
# (max over ranks); then the ping-pong and allreduce times of this machine (test_bench_grid pingpong)
# and tests/bench/train/optmodel.py, which predicts every 2- and 4-rank step from the 1-rank runs, the
# compute rate of two processes side by side and the alpha-beta fit, and prints the model at scale.
#   tests/bench/train/options.sh [NSTEPS] [ROUNDS]      (default 20 steps, 3 rounds)
#   ONLY="adam0 adam3 sdp4bit3" tests/bench/train/options.sh ...   only these options (adam0 is always run: the model's base)
#   RANKS="1 2" tests/bench/train/options.sh ...                      only these rank counts (default 1 2 4; 1 is the model's input)
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_py train matplotlib python3-matplotlib # optmodel.py's figure
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
N=${1:-20}
R=${2:-3}
DATA=${WATER_DATA:-tests/data/water_dft}
B=build/bench/train
mkdir -p $B
[ -x build/tests/test_bench_grid ] || make -s build/tests/test_bench_grid
[ -s $B/water_0.h5 ] || bin/surge dataset import $B/water_0.h5 $DATA/data_0 > /dev/null
RES=$B/options.txt
: > $RES
OPTS=("adam0|-deepmd_shard 0" "adam1|-deepmd_shard 1" "adam2|-deepmd_shard 2"
  "lion0|-deepmd_optimizer lion -deepmd_start_lr 1e-4" "lioncub|-deepmd_optimizer lion -deepmd_start_lr 1e-4 -deepmd_compress lion_cub"
  "lioncub_vote|-deepmd_optimizer lion -deepmd_start_lr 1e-4 -deepmd_compress lion_cub_allreduce"
  "sdp4bit|-deepmd_shard 2 -deepmd_compress sdp4bit -deepmd_sdp4bit_node_ranks 1"
  "adam3|-deepmd_shard 3" "adam2b|-deepmd_shard 2 -deepmd_shard_bucket_bytes 65536" "adam3b|-deepmd_shard 3 -deepmd_shard_bucket_bytes 65536"
  "sdp4bit3|-deepmd_shard 3 -deepmd_compress sdp4bit -deepmd_sdp4bit_node_ranks 1")
# forward + backward of one frame in two 1-rank runs side by side: the compute rate a rank gets when both
# ranks compute (the 2-rank runs' compute; as tests/bench/parallel/run.sh times its layers). Run in every
# round beside that round's other runs: this VM's speed drifts by ~10% within minutes (29 Nov: 1-rank steps
# of 788, 891, 873 ms in three rounds), and the model's 2-rank compute must come from the same minutes.
side_by_side() {
  local r=$1 k
  for k in 1 2; do
    bin/surge train inputs/deepmd/water.yaml -deepmd_data $B/water_0.h5 -deepmd_valid_data "" -deepmd_numb_steps $N -deepmd_disp_freq $N \
      -deepmd_save_freq 0 -deepmd_save_ckpt "" -deepmd_lcurve "" -deepmd_stat_frames 10 -deepmd_batch_size 1 -train_output $B/opt_side$k \
      -log_view > $B/side$k.log 2>&1 &
  done
  wait
  for k in 1 2; do
    awk -v n=$N -v r=$r '/^SgTrainLoss /{lo=$4} /^SgTrainBackward /{bw=$4} END {printf "RESULT side=1 round=%d loss=%.6e backward=%.6e\n", r, lo/n, bw/n}' $B/side$k.log >> $RES
  done
}
for r in $(seq 1 "$R"); do
  echo "# round $r load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a $RES
  side_by_side "$r"
  for np in ${RANKS:-1 2 4}; do
    for o in "${OPTS[@]}"; do
      name=${o%%|*}
      if [ -n "${ONLY:-}" ] && [ "$name" != adam0 ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
      log=$B/$name.$np.log
      mpiexec -n $np --bind-to none --oversubscribe bin/surge train inputs/deepmd/water.yaml -deepmd_data $B/water_0.h5 -deepmd_valid_data "" \
        -deepmd_numb_steps $N -deepmd_disp_freq $N -deepmd_save_freq 0 -deepmd_save_ckpt "" -deepmd_lcurve "" -deepmd_stat_frames 10 \
        -deepmd_batch_size 4 ${o#*|} -train_output $B/opt_$name -log_view -info > $log 2>&1
      awk -v o=$name -v np=$np -v n=$N -v r=$r '
        function num(s, re,   v) { if (!match(s, re)) return ""; v=substr(s, RSTART, RLENGTH); sub(/^[^0-9]*/, "", v); match(v, /^[0-9][0-9.]*(e[+-]?[0-9]+)?/); return substr(v, 1, RLENGTH) }
        /ZeRO stage/ && !z {z=1; match($0, /[0-9]+ parameters/); psi=substr($0, RSTART, RLENGTH-11); s=$0
          if (index(s, "during a step")) s=substr(s, index(s, "during a step")) # stage 3: the peak of a step
          match(s, /= [0-9.e+]+ KiB \(/); mem=substr(s, RSTART+2, RLENGTH-8); match($0, /sends [0-9.e+]+ KiB/); snd=substr($0, RSTART+6, RLENGTH-10)
          # by gradient buckets: + the open buckets bound; stage 3 by buckets has no total: its weights at most + gradients + state
          ob=num($0, "open buckets, [0-9.e+]+ KiB")
          if (index($0, "ZeRO stage 3 by buckets")) { w=num($0, "weights at most [0-9.e+]+ KiB"); g=num($0, "[)] [+] gradients [0-9.e+]+ [+] the buckets"); os=num($0, "[+] the buckets open [+] optimizer state [0-9.e+]+ KiB"); mem=w + g + os }
          if (ob != "") { mem=mem + ob; bucketed=1 } }
        /gradient by buckets measured/ {gpk=num($0, "[+] at most [0-9.e+]+ KiB of its"); early=num($0, "open: [0-9.e+]+ KiB of whole"); gsent=num($0, "and [0-9.e+]+ KiB sent to the other")}
        /ZeRO stage 3 by buckets [(]largest rank[)]/ {fills=num($0, "[0-9.e+]+ fills of its"); nbk=num($0, "fills of its [0-9]+ buckets"); fread=num($0, "[0-9.e+]+ KiB read per step")}
        /^SgTrainStep /{st=$4} /^SgTrainLoss /{lo=$4} /^SgTrainBackward /{bw=$4} /^SgTrainSync /{sy=$4} /^SgTrainUpdate /{up=$4}
        END {extra=""
          if (bucketed) { extra=sprintf(" open_peak_kib=%s early_kib=%s grad_sent_kib=%s", gpk, early, gsent); if (fills != "") extra=extra sprintf(" fills=%s nbuckets=%s fill_read_kib=%s", fills, nbk, fread) }
          printf "RESULT opt=%s ranks=%d batch=4 round=%d psi=%s mem_kib=%s sent_kib=%s step=%.6e loss=%.6e backward=%.6e sync=%.6e update=%.6e%s\n", o, np, r, psi, mem, snd, st/n, lo/n, bw/n, sy/n, up/n, extra}' $log >> $RES
    done
  done
done
echo "RESULT cores=$(getconf _NPROCESSORS_ONLN)" >> $RES
echo "# ping-pong, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $RES
mpiexec -n 2 --bind-to none --oversubscribe build/tests/test_bench_grid pingpong | grep '^RESULT' >> $RES
/usr/bin/python3 tests/bench/train/optmodel.py -figure $B/parallel_options.png $RES
