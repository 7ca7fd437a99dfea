#!/bin/bash
# surge train inputs/mffn/small.yaml on the small Rayleigh-Benard ensemble (docs/mffn.md). Asserts:
#  1. 40 steps (64 query points per crop, to keep the test at ~13 s of CPU): the loss of the last
#     progress line (steps 31-40) is at most 0.7 x that of the first (steps 1-10) -- measured
#     0.496 / 1.025; an untrained or wrongly-signed update does not fall;
#  2. the same run on 2 ranks (2 crops each) ends with weights within 1e-9 (relative to the largest)
#     of the 1-rank run: only the order of the gradient sum differs (measured 6e-14);
#  3. 10 steps equal 5 steps + checkpoint + restart for 5, bit for bit (io/nn checkpoint: weights,
#     Adam, step; the crops are a function of (seed, step, sample) and need no state);
#  4. a crop that is not a multiple of its factor is refused with one "surge: error:" line naming
#     -mffn_crop, exit 1, no model file;
#  5. -mffn_calibrate_crops on a residual model: 1 and 2 ranks fit the same gains (printed to 4
#     digits) and end with weights within 1e-9 of each other (every rank fits on the same crops);
#     on a model without -mffn_residual it is refused with one line naming the option, no model file.
set -e
cd "$(dirname "$0")/../../.."
ROOT=$PWD
SURGE=${SURGE:-$ROOT/bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
D=build/tmp/mffn_train
rm -rf $D && mkdir -p $D && cd $D
$SURGE ensemble $ROOT/inputs/boussinesq/ensemble_small.yaml -ensemble_output rb_small > ens.log
A="$ROOT/inputs/mffn/small.yaml -mffn_numb_steps 40 -mffn_disp_freq 10 -mffn_points 64"
$SURGE train $A -train_output one -mffn_lcurve one.lc > one.log
. $ROOT/tests/lib/num.sh
first=$(sg_num "loss of the first progress line" "$(grep -v '^#' one.lc | head -1 | awk '{print $4}')")
last=$(sg_num "loss of the last progress line" "$(grep -v '^#' one.lc | tail -1 | awk '{print $4}')")
echo "1. loss at step 10: $first, at step 40: $last ($(grep 'training took' one.log))"
awk -v a="$first" -v b="$last" 'BEGIN{exit !(b <= 0.7*a)}' || { echo "FAIL: the loss did not fall to 0.7x"; exit 1; }
$MPI $SURGE train $A -train_output two -mffn_lcurve two.lc > two.log
# test_mffn compare decides (exit status): same architecture and relative difference <= 1e-9
cmp=$($ROOT/build/tests/test_mffn compare one.h5 two.h5 1e-9) || { echo "FAIL: 2 ranks vs 1 rank: $cmp (tolerance 1e-9)"; exit 1; }
echo "2. 2 ranks vs 1 rank after 40 steps: weights $cmp; last loss $(grep -v '^#' two.lc | tail -1 | awk '{print $4}') vs $last"
B="$ROOT/inputs/mffn/small.yaml -mffn_numb_steps 10 -mffn_disp_freq 5 -mffn_points 64"
$SURGE train $B -train_output full > full.log
$SURGE train $B -mffn_save_freq 5 -mffn_save_ckpt ck.h5 -train_output half > half.log
$SURGE train $B -mffn_restart ck.h5 -train_output rest > rest.log
cmp=$($ROOT/build/tests/test_mffn compare full.h5 rest.h5) || { echo "FAIL: the restart differs: $cmp"; exit 1; }
echo "3. 10 steps vs 5 + checkpoint + restart 5: $cmp"
if $SURGE train $A -mffn_crop 4,15,32 -train_output bad > bad.log 2>&1; then echo "FAIL: crop 15 / factor 2 accepted"; exit 1; fi
line=$(grep "^surge: error:" bad.log | head -1)
echo "4. $line"
[ "$(grep -c '^surge: error:' bad.log)" = 1 ] && echo "$line" | grep -q -- "-mffn_crop" && [ ! -e bad.h5 ] || { echo "FAIL: not one clear line"; cat bad.log; exit 1; }
C="$A -mffn_residual 1 -mffn_calibrate_crops 8 -mffn_valid_points 256"
$SURGE train $C -train_output cal1 > cal1.log
$MPI $SURGE train $C -train_output cal2 > cal2.log
g1=$(grep "correction's gain" cal1.log || true); g2=$(grep "correction's gain" cal2.log || true)
cmp=$($ROOT/build/tests/test_mffn compare cal1.h5 cal2.h5 1e-9) || { echo "FAIL: calibrated 2 ranks vs 1 rank: $cmp (tolerance 1e-9)"; exit 1; }
echo "5. ${g1#mffn: }; 2 ranks: weights $cmp"
[ -n "$g1" ] && [ "$g1" = "$g2" ] || { echo "FAIL: no gain line, or 1 and 2 ranks differ"; cat cal1.log cal2.log; exit 1; }
if $SURGE train $A -mffn_calibrate_crops 8 -train_output badcal > badcal.log 2>&1; then echo "FAIL: calibrate_crops accepted without residual"; exit 1; fi
line=$(grep "^surge: error:" badcal.log | head -1)
echo "   $line"
[ "$(grep -c '^surge: error:' badcal.log)" = 1 ] && echo "$line" | grep -q -- "-mffn_calibrate_crops" && [ ! -e badcal.h5 ] || { echo "FAIL: not one clear line"; cat badcal.log; exit 1; }
echo PASS
