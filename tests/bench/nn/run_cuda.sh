#!/usr/bin/env bash
# run_cuda.sh -- surge's NN engine on its CUDA backend against PyTorch on the same GPU, the four
# training steps of bench_nn.c / bench_torch.py (forward + backward + Adam; each step ends by reading
# the loss, which waits for the device). Figures, not pass/fail; needs nvcc, a GPU and a python3 with a
# CUDA build of torch >= 2.0 (the device machines have both; Debian's python3-torch is CPU-only).
#   tests/bench/nn/run_cuda.sh [steps] [rounds]
set -u
here=$(cd "$(dirname "$0")" && pwd)
steps=${1:-50}
rounds=${2:-3}
nn="$here/../../../surrogates/nn"
make -s -C "$nn" build/cuda/bench_nn >/dev/null || { echo "bench nn cuda: cannot build $nn/build/cuda/bench_nn (nvcc?)"; exit 2; }
bin="$nn/build/cuda/bench_nn"
py=${PYTHON:-python3}
$py -c 'import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  { echo "bench nn cuda: $py has no torch with a usable GPU; stopping rather than printing a ratio of nothing"; exit 2; }
echo "# surge nn (cuda) vs PyTorch $($py -c 'import torch;print(torch.__version__)') (cuda) on" \
     "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1);" \
     "best of $rounds medians of $steps steps (forward+backward+Adam)"
printf '%-6s %10s %10s %8s %12s\n' bench surge_ms torch_ms ratio surge_peakMB
for b in dp conv lstm force; do
  best_s="" best_p=""
  for r in $(seq "$rounds"); do
    read -r _ sms speak _ <<< "$(SGNN_BACKEND=cuda "$bin" "$b" "$steps")"
    read -r _ pms _ _ <<< "$(SGNN_BENCH_DEVICE=cuda $py "$here/bench_torch.py" "$b" "$steps")"
    [[ "$sms" =~ ^[0-9.]+$ && "$pms" =~ ^[0-9.]+$ ]] ||
      { echo "bench nn cuda: $b gave no time (surge '$sms', torch '$pms'): stopping"; exit 2; }
    best_s=$(awk -v a="$best_s" -v b="$sms" 'BEGIN{print (a == "" || b + 0 < a + 0) ? b : a}')
    best_p=$(awk -v a="$best_p" -v b="$pms" 'BEGIN{print (a == "" || b + 0 < a + 0) ? b : a}')
  done
  awk -v n="$b" -v s="$best_s" -v p="$best_p" -v m="$speak" 'BEGIN{printf "%-6s %10.3f %10.3f %8.2f %12s\n", n, s, p, s / p, m}'
done
