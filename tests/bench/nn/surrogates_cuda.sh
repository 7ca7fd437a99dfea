#!/bin/bash
# surrogates_cuda.sh -- MeshfreeFlowNet and the Deep Potential trained by `surge train -nn_backend cuda`
# and `-nn_backend cpu` on the same GPU machine (same seed, same threads), against the same networks'
# training step in PyTorch on that GPU: docs/nn.md "Surrogates on a GPU". Figures, not pass/fail.
#
# Here (a machine with PETSc, MPI and nvcc; builds bin/surge and the CUDA plugin, ~10 min of xz):
#   tests/bench/nn/surrogates_cuda.sh bundle [DIR]        (default .devbundle/gcuda; list DIR in
#                                                          .git/info/exclude, it must not be committed)
# DIR gets surge.tar.xz (tests/bench/device/pack.sh -s: bin/surge, its libraries, Open MPI, and
# libsgnn_cuda.so; ~29 MB), the training data (DeePMD-kit's water imported, the small Rayleigh-Benard
# ensemble: ~2.5 MB), this script, mpienv.sh and the PyTorch scripts. On the GPU machine (no PETSc, no
# MPI needed; CUDA 13's libcudart/libcublas and a python3 with torch >= 2.0 there), from the root of a
# copy of the repository (the decks are read from inputs/):
#   bash DIR/surrogates_cuda.sh OUTDIR                    (SG_THREADS: CPU threads, default all, <= 16)
# OUTDIR gets summary.txt (step times, final losses), the learning curves (*.lcurve) and results.tgz
# (logs NAME.out, models, machine.txt: nvidia-smi, CPU, versions). The PyTorch runs are skipped once SG_BUDGET
# seconds (330) have passed. tests/bench/nn/surrogates_plot.py OUTDIR PNG plots them.
# SG_MFFN_STEPS (240), SG_DP_STEPS (300), SG_MW_STEPS (40): training steps (fewer to rehearse on a CPU).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = bundle ]; then
  set -e
  cd "$HERE/../../.."
  DIR=${2:-.devbundle/gcuda}
  make -s bin/surge > /dev/null
  make -s -C surrogates/nn plugin > /dev/null
  P=surrogates/nn/build/cuda/libsgnn_cuda.so
  [ -f $P ] || { echo "surrogates_cuda.sh: $P was not built (no nvcc/cuBLAS here?)"; exit 2; }
  mkdir -p $DIR
  T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
  bin/surge ensemble inputs/boussinesq/ensemble_small.yaml -ensemble_output $T/rb_small > $T/ens.log
  d=tests/data/water_dft
  bin/surge dataset import $T/water_train.h5 $d/data_0 $d/data_1 $d/data_2 > /dev/null
  bin/surge dataset import $T/water_3.h5 $d/data_3 > /dev/null
  rm -f $DIR/*.h5 && cp $T/rb_small.h5 $T/water_train.h5 $T/water_3.h5 $DIR/
  cp tests/bench/nn/surrogates_cuda.sh tests/bench/device/mpienv.sh tests/bench/deepmd/dp_torch.py \
     tests/bench/mffn/torch_cuda.py tests/bench/mffn/torch_ref.py $DIR/
  cp tests/bench/engine_env.py tests/bench/engine_env.sh $DIR/
  tests/bench/device/pack.sh $DIR/surge.tar.xz -s -l $P bin/surge
  du -sh $DIR
  exit 0
fi

# ---- on the GPU machine ----
REPO=$(pwd)
[ -f $REPO/inputs/mffn/small.yaml ] || { echo "surrogates_cuda.sh: run it from the repository root"; exit 2; }
OUTD=$(realpath -m "${1:?usage: surrogates_cuda.sh OUTDIR  (or: surrogates_cuda.sh bundle [DIR])}")
W=/tmp/sgcuda
R=$W/results
SUM=$OUTD/summary.txt
ORIG_PATH=$PATH ORIG_LD=${LD_LIBRARY_PATH:-}
pyo() { env PATH="$ORIG_PATH" LD_LIBRARY_PATH="$ORIG_LD" python3 "$@"; }  # the machine's python, not the bundle's libraries
. $HERE/mpienv.sh
sg_unpack $HERE/surge.tar.xz $W || exit 2
mkdir -p $R "$OUTD" && cd $W
finish() { cp -f $W/run/*.out $W/run/*.log $W/run/*.lcurve $SUM $R/ 2>/dev/null; tar -C $W -czf "$OUTD/results.tgz" results; }
trap finish EXIT
S=$W/b/bin/surge
M="mpiexec --bind-to none -n 1"
sg_mpi $W "$M $S --version > $R/smoke.log 2>&1" || { cat $R/smoke.log; exit 2; }
# the plugin's CUDA libraries: its RUNPATH names /usr/local/cuda/lib64; else torch's wheels' copies
CU=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(pyo -c 'import nvidia; p = list(nvidia.__path__)[0]; print(" ".join(p + "/" + d + "/lib" for d in ("cublas", "cuda_runtime", "cu13")))' 2>/dev/null); do
  [ -e $d/libcublas.so.13 ] || [ -e $d/libcudart.so.13 ] && CU="$CU:$d"
done
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH$CU
TH=${SG_THREADS:-$(nproc --all)}; [ $TH -gt 16 ] && TH=16
export OPENBLAS_NUM_THREADS=$TH OMP_NUM_THREADS=$TH SGNN_NUM_THREADS=$TH
{ echo "# $(date -u); $(nproc --all) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $SG_MPI_MODE"
  echo "# threads: OPENBLAS/OMP/SGNN_NUM_THREADS=$TH; CUDA libraries from:${CU:- (none found)}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
  nvidia-smi 2>&1 | sed -n 3p
  head -1 $R/smoke.log
  pyo -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "device", torch.cuda.get_device_name() if torch.cuda.is_available() else "none")' 2>&1 | tail -1
  uname -r; } | tee $R/machine.txt
mkdir -p run && cd run
T0=$SECONDS
train() { # train NAME SECONDS ARGS...: one surge train, its learning curve in results/NAME.lcurve
  local name=$1 lim=$2; shift 2
  timeout $lim $M $S train "$@" -train_output $name > $name.out 2>&1
  echo "$name: rc $? at $((SECONDS - T0)) s; $(grep -E 'training took|Force  RMSE|^mffn: loss' $name.out | tr -s ' ' | tr '\n' ';')" | tee -a $SUM
  cp -f $name.h5 $R/ 2>/dev/null
  cp -f $name.lcurve "$OUTD"/ 2>/dev/null  # written at the end: a run stopped by timeout leaves only its log
}
MF="$REPO/inputs/mffn/small.yaml -mffn_data $HERE/rb_small.h5 -mffn_numb_steps ${SG_MFFN_STEPS:-240} -mffn_decay_steps 120 -mffn_disp_freq 10"
DP="$REPO/inputs/deepmd/water.yaml -deepmd_data $HERE/water_train.h5 -deepmd_valid_data $HERE/water_3.h5 -deepmd_numb_steps ${SG_DP_STEPS:-300}
    -deepmd_disp_freq 20 -deepmd_valid_frames 4 -deepmd_save_freq 1000000"
# a wider MFFN (the ra1e6 deck's widths, 512 points): step time only
MW="$REPO/inputs/mffn/small.yaml -mffn_data $HERE/rb_small.h5 -mffn_numb_steps ${SG_MW_STEPS:-40} -mffn_disp_freq 10 -mffn_channels 16,32,64
    -mffn_latent 32 -mffn_imnet 128,64,32 -mffn_points 512"
for b in cuda cpu; do
  train mffn_$b 60 $MF -mffn_lcurve mffn_$b.lcurve -nn_backend $b
  train dp_$b 100 $DP -deepmd_save_ckpt dp_${b}_ckpt.h5 -deepmd_lcurve dp_$b.lcurve -nn_backend $b
  train mffnw_$b 45 $MW -mffn_lcurve mffnw_$b.lcurve -nn_backend $b
done
# PyTorch on the GPU: the same networks (the DP of dp_torch.py with DeePMD-kit's water hyper-parameters,
# float32 as water.yaml; the MFFNs of the models surge just trained, float64)
cd $R
# the reference is the GPU machine's own torch (a CUDA build; Debian's python3-torch is CPU-only): without
# it, one line says so and the PyTorch columns are left out (tests/unit/core/bench_refs.py exempts this script)
NOTORCH=; pyo -c 'import torch' > /dev/null 2>&1 || { NOTORCH=1; echo "surrogates_cuda.sh: this machine's python3 has no torch: the PyTorch step times are left out" | tee -a $SUM; }
left() { [ -z "$NOTORCH" ] || return 1; [ $((SECONDS - T0)) -lt ${SG_BUDGET:-330} ] || { echo "skipped (budget of ${SG_BUDGET:-330} s spent): $1" | tee -a $SUM; false; }; }
st=$REPO/tests/data/water_dft/data_0
left dp_torch && ( cd $HERE && timeout 45 env PATH="$ORIG_PATH" LD_LIBRARY_PATH="$ORIG_LD" python3 dp_torch.py $st/set.000/coord.npy $st/set.000/box.npy \
    $st/set.000/energy.npy $st/set.000/force.npy $st/type.raw 60 f32 cuda ) 2>&1 | tail -3 | tee -a $SUM
for m in mffn_cpu.h5:128 mffnw_cpu.h5:512; do
  [ -f ${m%:*} ] || m=${m/cpu/cuda}
  [ -f ${m%:*} ] || { echo "torch mffn: ${m%:*} missing (surge's run failed)" | tee -a $SUM; continue; }
  left "torch $m" && ( cd $HERE && timeout 45 env PATH="$ORIG_PATH" LD_LIBRARY_PATH="$ORIG_LD" python3 torch_cuda.py $R/${m%:*} 2,8,8 ${m#*:} 4 30 ) 2>&1 | tail -2 | tee -a $SUM
done
[ -f mffn_cpu.h5 ] && left "torch cpu" && ( cd $HERE && timeout 40 env PATH="$ORIG_PATH" LD_LIBRARY_PATH="$ORIG_LD" python3 torch_cuda.py $R/mffn_cpu.h5 2,8,8 128 4 10 cpu $TH ) 2>&1 | tail -2 | tee -a $SUM
# step time from each run's progress lines (the learning curve's rows, also in a stopped run's log):
# (wall at the last line - wall at the first) / steps between
for f in $W/run/*_c[pu]*.out; do
  awk -v n=$(basename $f .out) '$1 ~ /^[0-9]+$/ && NF >= 5 && $NF ~ /^[0-9.]+$/ { if (!s0) { s0 = $1; w0 = $NF } s1 = $1; w1 = $NF; l = $0 }
    END { if (s1 > s0) printf "%s: %.4f s/step (steps %d-%d); last line: %s\n", n, (w1 - w0) / (s1 - s0), s0, s1, l }' $f
done | tee -a $SUM
echo "total $((SECONDS - T0)) s" | tee -a $SUM
