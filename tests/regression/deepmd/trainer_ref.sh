#!/bin/bash
# The Deep Potential's training, bit for bit against a stored reference (tests/regression/deepmd/ref/)
# produced by the training loop as it was before it moved onto SgTrainer (commit 891c847). Two decks
# (inputs/deepmd/pair.yaml, 200 steps, displayed every 10): one system, and two systems of 16 and 24
# atoms (per-step system choice); each on 1 and on 2 ranks, with a checkpoint at step 100; the 2-rank
# runs with the trainer's bucketed gradient sync in 8 KiB buckets (6 buckets of the 95 kB gradient, all
# started during backward), and the one-system deck again with the blocking allreduce sync. Compared:
# the lcurve (every column but wall_s, all printed digits) and SHA-256 of the raw bytes of every
# dataset of the model file and of the checkpoint (parameters, davg/dstd/bias, Adam moments). Any
# change of arithmetic (e.g. dividing the gradient after the allreduce instead of before) changes the
# last bit of a parameter and fails this test.
#
# The bits depend on OpenBLAS's kernels (SkylakeX and Haswell round GEMM sums differently) and on its
# thread count, so the test pins both: one thread, and the AVX-512 kernels where the CPU has AVX-512,
# else the AVX2 ones; one reference per kernel family (ref/SkylakeX from commit 3b0a484, the loop before
# the move; ref/Haswell made with that same commit's build on 2026-11-26, which the current code matches
# bit for bit). Without AVX2 no bit reference exists and the lcurve is compared to 1e-6 instead.
#   tests/regression/deepmd/trainer_ref.sh          compare
#   tests/regression/deepmd/trainer_ref.sh --update rewrite the reference (only when a change of the
#                                                   numbers is intended and explained in the commit)
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
export OPENBLAS_NUM_THREADS=1
if [ -n "${SURGE_TEST_BLAS_CORE:-}" ]; then CORE=$SURGE_TEST_BLAS_CORE   # e.g. Haswell on an AVX-512 CPU
elif grep -qw avx512f /proc/cpuinfo; then CORE=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then CORE=Haswell; else CORE=; fi
[ -n "$CORE" ] && export OPENBLAS_CORETYPE=$CORE
REF=tests/regression/deepmd/ref/${CORE:-SkylakeX}
D=build/tmp/deepmd_trainer_ref
rm -rf $D && mkdir -p $D
build/tests/test_deepmd_train data $D > /dev/null
# digest NAME FILE.h5: one line per dataset, "NAME DATASET sha256" of its raw little-endian bytes
digest() {
  for ds in $(h5ls -r "$2" | awk '$2 == "Dataset" {print $1}'); do
    h5dump -d "$ds" -b LE -o $D/raw.bin "$2" > /dev/null
    echo "$1 $ds $(sha256sum < $D/raw.bin | cut -c1-64)"
  done
}
fail=0
for sys in one two; do
  data=$D/pair_train.h5
  [ $sys = two ] && data=$D/pair_train.h5,$D/pair24_train.h5
  runs="np1 np2"; [ $sys = one ] && runs="np1 np2 np2_allreduce"
  for r in $runs; do
    run=$SURGE; sync=""
    case $r in np2) run="$MPI $SURGE"; sync="-deepmd_sync bucketed -deepmd_sync_bucket_kb 8" ;;
               np2_allreduce) run="$MPI $SURGE"; sync="-deepmd_sync allreduce" ;; esac
    t=${sys}_$r
    $run train inputs/deepmd/pair.yaml -deepmd_data $data -deepmd_valid_data $D/pair_valid.h5 -deepmd_disp_freq 10 $sync \
      -deepmd_lcurve $D/$t.lcurve -deepmd_save_freq 100 -deepmd_save_ckpt $D/$t.ckpt.h5 -train_output $D/$t.model > $D/$t.log
    t=${t%_allreduce} # compared with the same reference as the bucketed run
    awk '{NF--; print}' $D/${sys}_$r.lcurve > $D/$t.lcurve.txt # wall_s is the only column that may differ
    { digest model $D/${sys}_$r.model.h5; digest ckpt $D/${sys}_$r.ckpt.h5; } > $D/$t.sha256
    if [ "$1" = --update ]; then
      cp $D/$t.lcurve.txt $D/$t.sha256 $REF/
      echo "updated $REF/$t.*"
    elif [ -n "${SURGE_SANITIZED:-}" ] || [ -z "$CORE" ]; then
      # the sanitizer build (-O1, no -march=native) rounds differently, and without AVX2 OpenBLAS runs
      # other kernels: the stored bits are the optimised build's with the kernels above; here every
      # lcurve value must agree to 1e-6 relative (the model is the same)
      /usr/bin/python3 - $REF/$t.lcurve.txt $D/$t.lcurve.txt <<'PY' || fail=1
import sys, numpy as np
a, b = (np.loadtxt(f) for f in sys.argv[1:3])
ok = a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-12)
print(f"{sys.argv[2]}: sanitizer build, lcurve within 1e-6 of the optimised build's reference: {ok}")
sys.exit(0 if ok else 1)
PY
    elif cmp -s $D/$t.lcurve.txt $REF/$t.lcurve.txt && cmp -s $D/$t.sha256 $REF/$t.sha256; then
      echo "${sys}_$r ($CORE kernels): lcurve ($(grep -vc '^#' $D/$t.lcurve.txt) lines) and model/checkpoint bits identical to the reference"
    else
      echo "FAIL ${sys}_$r: differs from the reference"
      diff $REF/$t.lcurve.txt $D/$t.lcurve.txt | head -6 || true
      diff $REF/$t.sha256 $D/$t.sha256 | head -6 || true
      fail=1
    fi
  done
done
exit $fail
