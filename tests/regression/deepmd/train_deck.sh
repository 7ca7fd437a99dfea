#!/bin/bash
# surge train with the deepmd surrogate end to end (deck -> loader -> training -> model file), 1 and
# 2 ranks. Asserts: the run succeeds and writes the model; the dp-test force RMSE printed at the end
# is below 60% of the RMS force of the labels (1.07 eV/A; 200 steps only -- an untrained model scores
# 100%); 2 ranks print the same validation RMSEs as 1 rank to 6 digits (data parallel = serial);
# continuing from the saved model works; a misspelled deepmd key is an error naming the nearest key.
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
D=build/tmp/deepmd_deck
mkdir -p $D
build/tests/test_deepmd_train data $D > /dev/null
$SURGE train inputs/deepmd/pair.yaml > $D/one.log
test -s $D/pair_model.h5 || { echo "FAIL: no model file"; exit 1; }
f1=$(awk '/^Force  RMSE/ {print $4}' $D/one.log)
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml -train_output $D/pair_model2 > $D/two.log
f2=$(awk '/^Force  RMSE/ {print $4}' $D/two.log)
echo "force RMSE after 200 steps: 1 rank $f1, 2 ranks $f2 eV/A"
python3 -c "
import sys; a, b = float('$f1'), float('$f2')
ok = a < 0.6 * 1.0717 and abs(a - b) <= 1e-6 * a
print('PASS' if ok else 'FAIL'); sys.exit(0 if ok else 1)"
# continue training from the saved model (init_model): keeps its statistics and weights, so after
# 100 more steps at a small learning rate the error is no worse than 5% above where it was
$SURGE train inputs/deepmd/pair.yaml -deepmd_init_model $D/pair_model.h5 -deepmd_numb_steps 100 -deepmd_start_lr 2e-4 -deepmd_stop_lr 1e-4 -train_output $D/pair_model3 > $D/three.log
grep -q "continuing from" $D/three.log || { echo "FAIL: init_model not used"; exit 1; }
f3=$(awk '/^Force  RMSE/ {print $4}' $D/three.log)
echo "continued 100 steps from the model: force RMSE $f3 eV/A"
python3 -c "import sys; sys.exit(0 if float('$f3') < 1.05 * float('$f1') else 1)" || { echo "FAIL: continuing made it worse"; exit 1; }
if $SURGE train inputs/deepmd/pair.yaml -deepmd_numb_step 5 > $D/typo.log 2>&1; then echo "FAIL: misspelled key accepted"; exit 1; fi
grep -q "numb_steps" $D/typo.log || { echo "FAIL: the error does not name deepmd_numb_steps"; cat $D/typo.log; exit 1; }
echo "misspelled key rejected: OK"
