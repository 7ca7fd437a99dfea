#!/usr/bin/env bash
# run.sh -- surge NN engine vs PyTorch CPU, same shapes, same thread counts,
# in one script so both see the same machine. Figures, not pass/fail.
#   tests/bench/nn/run.sh [steps] [rounds]
# Each (benchmark, threads) pair runs surge then torch, `rounds` times
# alternating; each run reports the median step time of `steps` steps and we
# keep the best median per engine (the shared machine's load only ever adds
# time); the median over the rounds is printed too (med columns). Both engines get OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=T; torch also
# set_num_threads(T).
# OpenBLAS 0.3.21 misdetects this CPU (unknown cpuid model -> "Prescott"
# kernels: 4.8 instead of 24 GFLOP/s DGEMM). With AVX-512 present we set
# OPENBLAS_CORETYPE=SkylakeX for BOTH engines (Debian's torch does its GEMMs
# in the same libopenblas). SGNN_BENCH_CORETYPE=default skips that.
# Both engines also run with the allocator settings of tests/bench/engine_env.sh (without them
# PyTorch 1.13 page-faults every fresh large tensor in again on these VMs).
# PyTorch is the reference: without it, or when bench_torch.py gives no time, the benchmark stops
# with a message instead of printing ratios of nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
steps=${1:-30}
rounds=${2:-3}
bin="$here/../../../surrogates/nn/build/bench_nn"
make -s -C "$here/../../../surrogates/nn" build/bench_nn >/dev/null || { echo "bench nn: cannot build $bin"; exit 2; }
py=/usr/bin/python3
. "$here/../engine_env.sh"
if [ "${SGNN_BENCH_CORETYPE:-auto}" = auto ] && grep -q avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
. "$here/../require.sh"
bench_require_py nn torch python3-torch
echo "# surge nn vs PyTorch $($py -c 'import torch;print(torch.__version__)');" \
     "best of $rounds medians of $steps steps (forward+backward+Adam); $(nproc) cores;" \
     "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-auto}; MALLOC_MMAP_THRESHOLD_=$MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_=$MALLOC_TRIM_THRESHOLD_; load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A ms peak rss all
min() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "") print b; else if (b+0 < a+0) print b; else print a }'; }
for r in $(seq "$rounds"); do
  for b in dp conv lstm force; do
    for t in 1 2; do
      read -r _ sms speak srss <<< "$(OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t "$bin" "$b" "$steps")"
      [[ "$sms" =~ ^[0-9.]+$ ]] || { echo "bench nn: $bin $b gave no time ('$sms'): stopping rather than printing a ratio of nothing"; exit 2; }
      ms[$b,s,$t]=$(min "${ms[$b,s,$t]:-}" "$sms"); peak[$b]=$speak; rss[$b,s]=$srss; all[$b,s,$t]+=" $sms"
      out=$(OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t SGNN_BENCH_THREADS=$t $py "$here/bench_torch.py" "$b" "$steps" 2>&1)
      read -r _ pms _ prss <<< "$out"
      [[ "$pms" =~ ^[0-9.]+$ ]] && [ $(awk -v v="$pms" 'BEGIN{print (v > 0)}') = 1 ] || {
        echo "$out" | tail -n 5
        echo "bench nn: the reference bench_torch.py $b ($t threads) gave no time ('$pms'): stopping rather than printing a ratio of nothing"; exit 2; }
      ms[$b,p,$t]=$(min "${ms[$b,p,$t]:-}" "$pms"); rss[$b,p]=$prss; all[$b,p,$t]+=" $pms"
    done
  done
done
med() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -g | awk '{v[NR]=$1} END{ print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2 }'; }
printf '%-6s %3s %10s %10s %8s   %10s %10s %8s\n' bench thr surge_ms torch_ms ratio surge_med torch_med med_rat
for b in dp conv lstm force; do
  for t in 1 2; do
    awk -v n="$b" -v t="$t" -v a="${ms[$b,s,$t]}" -v c="${ms[$b,p,$t]}" -v am="$(med "${all[$b,s,$t]}")" \
        -v cm="$(med "${all[$b,p,$t]}")" \
      'BEGIN{ printf "%-6s %3s %10.3f %10.3f %8s   %10.3f %10.3f %8s\n", n, t, a, c, (c+0>0) ? sprintf("%.2f", a/c) : "n/a",
              am, cm, (cm+0>0) ? sprintf("%.2f", am/cm) : "n/a" }'
  done
done
echo
printf '%-6s %12s %12s %8s   %12s %10s %10s\n' bench surge_best torch_best ratio surge_peakMB surge_rss torch_rss
for b in dp conv lstm force; do
  sb=$(min "${ms[$b,s,1]}" "${ms[$b,s,2]}"); pb=$(min "${ms[$b,p,1]}" "${ms[$b,p,2]}")
  awk -v n="$b" -v a="$sb" -v c="$pb" -v pk="${peak[$b]}" -v r1="${rss[$b,s]}" -v r2="${rss[$b,p]}" \
    'BEGIN{ printf "%-6s %12.3f %12.3f %8s   %12s %10s %10s\n", n, a, c, (c+0>0) ? sprintf("%.2f", a/c) : "n/a", pk, r1, r2 }'
done
echo "# ratio = surge/torch (< 1: surge faster), best of the rounds; med_rat: ratio of the medians over rounds; best = better of the 1- and 2-thread settings"
echo "# peakMB: surge tensor bytes at peak (sgnn_mem_peak); rss: whole-process max RSS in MB (torch's includes the Python runtime)"
