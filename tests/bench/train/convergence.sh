#!/bin/bash
# Convergence of the communication-efficient options against the uncompressed baseline over seeds
# (issue 38; figures, not pass/fail; docs/parallel.md "Convergence of the options"). On 2 ranks, for
# seeds 1 2 3, with Adam (the deck's learning rate), Lion and Lion Cub (1-bit votes, momenta averaged
# every 10 steps; both at Adam's rate / DIV, default 10: Chen et al. 2023 advise 3-10x smaller), and
# SDP4Bit (Adam at the deck's rate, ZeRO stage 2, 4-bit weight differences and 4-bit Hadamard-smoothed
# gradients: -sdp4bit_node_ranks 1, the most compressed form; its baseline is adam, which stage 2 equals
# to round-off):
#   Deep Potential, DeePMD-kit's water (inputs/deepmd/water.yaml, float32) shortened to STEPS steps
#     (default 300, global batch 2, the rate decayed 100x every 10% of the steps); at the end dp test on
#     data_3 (held out): energy RMSE per atom and force RMSE;
#   MeshfreeFlowNet, inputs/mffn/small.yaml (120 steps, batch 4); at the end the held-out evaluation
#     on an ensemble of another seed: NMAE of p, b, u, w.
# ZeRO stages 1 and 2 are not run: they give Adam's weights bit for bit (train_zero, train_zero_deepmd).
# Prints per option the mean and spread over the seeds, the step time on 2 ranks and the bytes per step
# (the trainer's start-up line).
#   tests/bench/train/convergence.sh [STEPS] [DIV]      (ONLY="lion_cub" or ONLY="adam sdp4bit" runs those
#                                                       options; the summary reads the other rows from the last run)
set -e
cd "$(dirname "$0")/../../.."
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 SGNN_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
ROOT=$PWD
STEPS=${1:-300}
DIV=${2:-10}
DATA=${WATER_DATA:-$ROOT/tests/data/water_dft}
B=build/bench/train/conv
mkdir -p $B
cd $B
S="$ROOT/bin/surge"
[ -s water_train.h5 ] || "$S" dataset import water_train.h5 $DATA/data_0 $DATA/data_1 $DATA/data_2 > /dev/null
[ -s water_3.h5 ] || "$S" dataset import water_3.h5 $DATA/data_3 > /dev/null
[ -s rb_small.h5 ] || "$S" ensemble $ROOT/inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_small > /dev/null
[ -s rb_valid.h5 ] || "$S" ensemble $ROOT/inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_valid -ensemble_seed 11 > /dev/null
RES=results_div$DIV.txt
if [ -n "${ONLY:-}" ] && [ -s $RES ]; then grep -v -E " opt=(${ONLY// /|}) " $RES > $RES.keep || true; mv $RES.keep $RES; else : > $RES; fi
M="mpiexec -n 2 --bind-to none --oversubscribe"
for seed in 1 2 3; do
  echo "# seed $seed load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)" | tee -a $RES
  llr=$(/usr/bin/python3 -c "print(1e-3/$DIV)")
  for o in "adam|1e-3|" "lion|$llr|-deepmd_optimizer lion" "lion_cub|$llr|-deepmd_optimizer lion -deepmd_compress lion_cub" \
    "sdp4bit|1e-3|-deepmd_shard 2 -deepmd_compress sdp4bit -deepmd_sdp4bit_node_ranks 1"; do
    IFS='|' read -r name lr opts <<< "$o"
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $name "* ]] || continue
    log=dp_${name}_$seed.log
    $M "$S" train $ROOT/inputs/deepmd/water.yaml -deepmd_data water_train.h5 -deepmd_valid_data water_3.h5 -deepmd_numb_steps $STEPS \
      -deepmd_decay_steps $((STEPS / 10)) -deepmd_start_lr $lr -deepmd_stop_lr $(/usr/bin/python3 -c "print($lr/100)") -deepmd_disp_freq $((STEPS / 3)) \
      -deepmd_save_freq 0 -deepmd_save_ckpt "" -deepmd_lcurve dp_${name}_$seed.lcurve -deepmd_stat_frames 20 -deepmd_seed $seed \
      -train_output dp_${name}_$seed $opts -info > $log 2>&1
    awk -v o=$name -v s=$seed -v n=$STEPS '/ZeRO stage/ && !z {z=1; match($0, /sends [0-9.e+]+ KiB/); snd=substr($0, RSTART+6, RLENGTH-10)}
      /Energy RMSE\/Natoms/ {e=$4} /Force  RMSE/ {f=$4} /training took/ {t=$4}
      END {printf "RESULT model=dp opt=%s seed=%d e_rmse=%s f_rmse=%s step_s=%.5f sent_kib=%s\n", o, s, e, f, t/n, snd}' $log >> $RES
    log=mffn_${name}_$seed.log
    mlr=$( [ $name = adam ] || [ $name = sdp4bit ] && echo 3e-3 || /usr/bin/python3 -c "print(3e-3/$DIV)" )
    $M "$S" train $ROOT/inputs/mffn/small.yaml -mffn_data rb_small.h5 -mffn_valid_data rb_valid.h5 -mffn_seed $seed -mffn_start_lr $mlr \
      -mffn_lcurve mffn_${name}_$seed.lcurve -train_output mffn_${name}_$seed ${opts//deepmd/mffn} -info > $log 2>&1
    awk -v o=$name -v s=$seed '/ZeRO stage/ && !z {z=1; match($0, /sends [0-9.e+]+ KiB/); snd=substr($0, RSTART+6, RLENGTH-10)}
      /mffn:   [pbuw]  / {m += $3; k++} /training took/ {t=$4} /^ +120 / {loss=$4}
      END {printf "RESULT model=mffn opt=%s seed=%d nmae=%.5e loss=%s step_s=%.5f sent_kib=%s\n", o, s, m/k, loss, t/120, snd}' $log >> $RES
  done
done
/usr/bin/python3 - $RES <<'PY'
import statistics as st, sys
rows = [dict(f.split("=", 1) for f in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("RESULT")]
for model, keys in (("dp", ("e_rmse", "f_rmse")), ("mffn", ("nmae", "loss"))):
    print(f"{model}:")
    base = {}
    for o in ("adam", "lion", "lion_cub", "sdp4bit"):
        r = [x for x in rows if x["model"] == model and x["opt"] == o]
        if not r:
            continue
        line = f"  {o:9s}"
        for k in keys:
            v = [float(x[k]) for x in r]
            m, sd = st.mean(v), (st.stdev(v) if len(v) > 1 else 0.0)
            base.setdefault(k, (m, sd))
            bm, bsd = base[k]
            line += f"  {k} {m:.4g} +- {sd:.2g} (min {min(v):.4g}, max {max(v):.4g}; {100*(m/bm-1):+.1f}% vs adam)"
        line += f"  step {1e3*st.median(float(x['step_s']) for x in r):.1f} ms  sent {r[0]['sent_kib']} KiB/step"
        print(line)
PY
