#!/usr/bin/env bash
# run.sh -- surge NN engine vs PyTorch CPU, same shapes, same thread counts,
# in one script so both see the same machine load. Figures, not pass/fail.
#   tests/bench/nn/run.sh [steps]
# Both engines get OPENBLAS_NUM_THREADS=T; torch also set_num_threads(T).
# OpenBLAS 0.3.21 misdetects this CPU (cpuid model unknown -> "Prescott",
# 4.8 vs 24 GFLOP/s DGEMM); with AVX-512 present we set
# OPENBLAS_CORETYPE=SkylakeX for BOTH engines (Debian's torch uses the same
# libopenblas for its GEMMs). Set SGNN_BENCH_CORETYPE=default to skip that.
set -u
here=$(cd "$(dirname "$0")" && pwd)
steps=${1:-30}
bin="$here/../../../surrogates/nn/build/bench_nn"
py=/usr/bin/python3
if [ "${SGNN_BENCH_CORETYPE:-auto}" = auto ] && grep -q avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
have_torch=1
$py -c 'import torch' 2>/dev/null || have_torch=0
echo "# surge nn vs PyTorch $($py -c 'import torch;print(torch.__version__)' 2>/dev/null || echo absent)," \
     "median of $steps steps (forward+backward+Adam); $(nproc) cores; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto}"
printf '%-6s %3s %10s %10s %8s %12s %10s %10s\n' bench thr surge_ms torch_ms ratio surge_peakMB surge_rss torch_rss
declare -A best
for b in dp conv lstm force; do
  for t in 1 2; do
    s=$(OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$bin" "$b" "$steps")
    if [ $have_torch = 1 ]; then
      p=$(OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t SGNN_BENCH_THREADS=$t $py "$here/bench_torch.py" "$b" "$steps")
    else
      p="$b nan - nan"
    fi
    read -r _ sms speak srss <<< "$s"
    read -r _ pms _ prss <<< "$p"
    ratio=$(awk -v a="$sms" -v b="$pms" 'BEGIN{ if (b+0>0) printf "%.2f", a/b; else print "n/a"}')
    printf '%-6s %3s %10s %10s %8s %12s %10s %10s\n' "$b" "$t" "$sms" "$pms" "$ratio" "$speak" "$srss" "$prss"
    best[$b,s,$t]=$sms; best[$b,p,$t]=$pms
  done
  bs=$(awk -v a="${best[$b,s,1]}" -v b="${best[$b,s,2]}" 'BEGIN{print (a<b)?a:b}')
  bp=$(awk -v a="${best[$b,p,1]}" -v b="${best[$b,p,2]}" 'BEGIN{print (a<b)?a:b}')
  awk -v n="$b" -v a="$bs" -v b="$bp" 'BEGIN{ if (b+0>0) printf "%-6s best-vs-best: surge %.3f ms, torch %.3f ms, surge/torch = %.2f\n", n, a, b, a/b }'
done
echo "# ratio < 1: surge faster. peakMB: tensor bytes (sgnn_mem_peak); rss: process max RSS in MB"
