#!/bin/bash
# -nn_backend: where the NN engine's tensors live when a surrogate trains. Asserts: cpu (the default)
# trains; cuda on this machine (no GPU) is refused on 1 and on 2 ranks with exit 1 and exactly one
# line "surge: error:" that names -nn_backend and the fix, before any file is written; an unknown name
# is refused with the list. Where configure found nvcc (config.mk's NVCC), the refusal must come from
# the CUDA backend's device probe ("no CUDA device: cudaGetDeviceCount ..."): the proof that surge
# really opens the backend's plugin (surrogates/nn/backend_cudaload.c); a build that leaves it out
# (make NVCC=) says "this build has no CUDA backend" and fails here. Without nvcc that line is the one
# expected. A machine with a GPU is outside this test (docs/nn.md: the GPU check).
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
D=build/tmp/train_backend
# make check-sanitize builds with NVCC= (Makefile), so its binary has no plugin whatever config.mk says
if [ "${SURGE_SANITIZED:-0}" != 1 ] && grep -q '^NVCC *= *[^ ]' config.mk; then probe="no CUDA device: cudaGetDeviceCount"; else probe="this build has no CUDA backend"; fi
if command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q GPU; then echo "SKIP: this machine has a GPU: the refusal is not what to test here (docs/nn.md)"; exit 77; fi
rm -rf $D && mkdir -p $D
build/tests/test_deepmd_train data $D > /dev/null
A="inputs/deepmd/pair.yaml -deepmd_data $D/pair_train.h5 -deepmd_valid_data $D/pair_valid.h5 -deepmd_numb_steps 10 -deepmd_lcurve $D/lc.txt"
$SURGE train $A -nn_backend cpu -train_output $D/cpu > $D/cpu.log
test -s $D/cpu.h5 || { echo "FAIL: -nn_backend cpu wrote no model"; exit 1; }
echo "-nn_backend cpu: trained, $(tail -1 $D/cpu.log)"
for np in 1 2; do
  run=$SURGE; [ $np = 2 ] && run="$MPI $SURGE"
  for b in cuda gpu; do
    rm -f $D/lc.txt
    if $run train $A -nn_backend $b -train_output $D/$b > $D/$b.log 2>&1; then echo "FAIL: -nn_backend $b accepted ($run)"; exit 1; fi
    n=$(grep -c "^surge: error:" $D/$b.log || true)
    line=$(grep "^surge: error:" $D/$b.log | head -1)
    echo "-nn_backend $b, $np rank(s): $line"
    [ "$n" = 1 ] && echo "$line" | grep -q -- "-nn_backend" && echo "$line" | grep -q "cpu" || { echo "FAIL: not one clear line"; cat $D/$b.log; exit 1; }
    [ $b = gpu ] || echo "$line" | grep -qF "$probe" || { echo "FAIL: the refusal does not come from '$probe'"; exit 1; }
    ! grep -q "PETSC ERROR\|Caught signal" $D/$b.log || { echo "FAIL: a traceback or a signal"; exit 1; }
    [ ! -e $D/$b.h5 ] && [ ! -e $D/lc.txt ] || { echo "FAIL: a refused run wrote a file"; exit 1; }
  done
done
echo PASS
