#!/bin/bash
# surge train with the deepmd surrogate end to end (deck -> loader -> training -> model file), 1 and
# 2 ranks. Asserts: the run succeeds and writes the model; the dp-test force RMSE printed at the end
# is below 60% of the RMS force of the labels (1.07 eV/A; 200 steps only -- an untrained model scores
# 100%); 2 ranks print the same validation RMSEs as 1 rank to 6 digits (data parallel = serial);
# continuing from the saved model works; a 2-rank run interrupted after its step-40 checkpoint and
# continued with -deepmd_restart prints the same validation RMSEs (all digits) as the uninterrupted
# run, one rank refuses that checkpoint, a restart on other data says so, one with another learning option is refused; change_bias (dp change-bias) on 1 and 2 ranks writes the
# same bias (all printed digits) and lowers the training-frame energy RMSE, and without init_model it
# is refused with the fix named; test_detail writes DeePMD-kit's dp test detail files, identical on 1
# and 2 ranks, whose force and energy RMSEs recomputed from the rows equal the printed ones;
# numb_steps 0 with init_model is dp test alone (the training run's numbers), refused without a model; a misspelled deepmd key is an error naming the nearest key.
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
# restart: 60 steps on 2 ranks with a checkpoint every 40 (decay every 10 steps, so the schedule
# moves), vs the same deck restarted from the step-40 checkpoint
R="-deepmd_numb_steps 60 -deepmd_decay_steps 10 -deepmd_save_freq 40 -deepmd_save_ckpt $D/ckpt.h5 -deepmd_lcurve $D/lc_restart.txt"
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $R -train_output $D/pair_full > $D/full.log
cp $D/ckpt.h5 $D/ckpt40.h5
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $R -deepmd_restart $D/ckpt40.h5 -train_output $D/pair_rest > $D/rest.log
grep -q "restarting from .* after step 40 of 60" $D/rest.log || { echo "FAIL: restart did not resume at step 40"; cat $D/rest.log; exit 1; }
a=$(grep -E "^(Energy|Force) " $D/full.log); b=$(grep -E "^(Energy|Force) " $D/rest.log)
echo "uninterrupted: $(echo $a | tr '\n' ' ')"; echo "restarted:     $(echo $b | tr '\n' ' ')"
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: the restarted run ends differently"; exit 1; }
if $SURGE train inputs/deepmd/pair.yaml $R -deepmd_restart $D/ckpt40.h5 -train_output $D/pair_bad > $D/rest1.log 2>&1; then echo "FAIL: 1 rank accepted a 2-rank checkpoint"; exit 1; fi
grep -q "Restart on 2 rank" $D/rest1.log || { echo "FAIL: the refusal does not say why"; cat $D/rest1.log; exit 1; }
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $R -deepmd_restart $D/ckpt40.h5 -deepmd_data $D/pair_train.h5,$D/pair_valid.h5 -train_output $D/pair_other > $D/rest_other.log
grep -q "restart: WARNING: .* 48 training frames in 1 system(s), this one has 64 in 1" $D/rest_other.log || { echo "FAIL: a restart on other data is not flagged"; cat $D/rest_other.log; exit 1; }
# the checkpoint records the training's options: a learning option changed on restart is refused in
# one line naming it (the data option above may change)
if ${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $R -deepmd_restart $D/ckpt40.h5 -deepmd_start_lr 0.01 -train_output $D/pair_bad > $D/rest_opt.log 2>&1; then echo "FAIL: a restart with another start_lr was accepted"; exit 1; fi
[ "$(grep -c '^surge: error: deepmd: restart: .* other options: -deepmd_start_lr was 0.005, now 0.01; ' $D/rest_opt.log)" = 1 ] || { echo "FAIL: the changed option is not refused in one line naming it"; cat $D/rest_opt.log; exit 1; }
echo "restart: identical to the uninterrupted run; wrong rank count refused; other data flagged; other options refused: OK"
# change_bias: refit the energy bias of the saved model on the training frames, 1 and 2 ranks
CB="-deepmd_init_model $D/pair_model.h5 -deepmd_change_bias"
$SURGE train inputs/deepmd/pair.yaml $CB -train_output $D/pair_cb1 > $D/cb1.log
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $CB -train_output $D/pair_cb2 > $D/cb2.log
test -s $D/pair_cb1.h5 -a -s $D/pair_cb2.h5 || { echo "FAIL: change_bias wrote no model"; exit 1; }
a=$(grep "bias_atom_e .* -> " $D/cb1.log); b=$(grep "bias_atom_e .* -> " $D/cb2.log)
echo "change_bias, 1 rank: $(echo $a | tr '\n' ' ')"; echo "change_bias, 2 ranks: $(echo $b | tr '\n' ' ')"
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: change_bias differs between 1 and 2 ranks"; exit 1; }
awk '/change_bias on/ {ok = ($(NF-1) + 0 <= $(NF-3) + 0)} END {exit ok ? 0 : 1}' $D/cb1.log || { echo "FAIL: change_bias raised the energy RMSE"; grep "change_bias on" $D/cb1.log; exit 1; }
if $SURGE train inputs/deepmd/pair.yaml -deepmd_change_bias -train_output $D/pair_cb_bad > $D/cb_bad.log 2>&1; then echo "FAIL: change_bias without init_model accepted"; exit 1; fi
grep -q "set deepmd: {init_model" $D/cb_bad.log || { echo "FAIL: the change_bias refusal does not name init_model"; cat $D/cb_bad.log; exit 1; }
echo "change_bias: same on 1 and 2 ranks, refused without init_model: OK"
# dp test detail files (change_bias mode: no training, just the final dp test on valid_data)
$SURGE train inputs/deepmd/pair.yaml $CB -deepmd_test_detail $D/det1 -train_output $D/pair_det1 > $D/det1.log
${MPIEXEC:-mpiexec -n 2 --oversubscribe} $SURGE train inputs/deepmd/pair.yaml $CB -deepmd_test_detail $D/det2 -train_output $D/pair_det2 > $D/det2.log
/usr/bin/python3 - $D <<'PY'
import sys, numpy as np, filecmp
d = sys.argv[1]
ok = True
for ext in ("e.out", "e_peratom.out", "f.out", "v.out", "v_peratom.out"):
    ok &= filecmp.cmp(f"{d}/det1.{ext}", f"{d}/det2.{ext}", shallow=False)
lines = open(f"{d}/det1.f.out").readlines()   # the write path's kind line, then DeePMD-kit's header
ok &= lines[0] == "# surge-file: dp test detail\n"
hdr = lines[1].split()
e, ea, f, v = (np.loadtxt(f"{d}/det1.{x}") for x in ("e.out", "e_peratom.out", "f.out", "v.out"))
log = {l.split(":")[0].strip(): float(l.split(":")[1].split()[0]) for l in open(f"{d}/det1.log") if l.startswith(("Energy", "Force")) and " RMSE" in l}
fr = np.sqrt(np.mean((f[:, 3:] - f[:, :3]) ** 2)); er = np.sqrt(np.mean((ea[:, 1] - ea[:, 0]) ** 2))
print(f"detail: {len(e)} frames, {len(f)} force rows, header {' '.join(hdr[2:])}; 1 and 2 ranks identical: {ok}")
print(f"RMSE from the rows: force {fr:.6e} (printed {log['Force  RMSE']:.6e}), energy/atom {er:.6e} (printed {log['Energy RMSE/Natoms']:.6e})")
ok &= len(e) == 16 and len(f) == 16 * 16 and v.shape == (16, 18) and hdr[2:] == ["data_fx", "data_fy", "data_fz", "pred_fx", "pred_fy", "pred_fz"]
ok &= abs(fr - log["Force  RMSE"]) <= 1e-6 * fr and abs(er - log["Energy RMSE/Natoms"]) <= 1e-6 * er
print("PASS" if ok else "FAIL"); sys.exit(0 if ok else 1)
PY
# dp test alone: numb_steps 0 with init_model prints the same validation RMSEs as the run that trained the model
$SURGE train inputs/deepmd/pair.yaml -deepmd_init_model $D/pair_model.h5 -deepmd_numb_steps 0 -train_output $D/pair_test0 > $D/test0.log
a=$(grep -E "^(Energy|Force) " $D/one.log); b=$(grep -E "^(Energy|Force) " $D/test0.log)
[ -n "$b" ] && [ "$a" = "$b" ] || { echo "FAIL: numb_steps 0 (dp test) differs from the training run's final dp test"; echo "$a"; echo "$b"; exit 1; }
if $SURGE train inputs/deepmd/pair.yaml -deepmd_numb_steps 0 -train_output $D/pair_test0b > $D/test0b.log 2>&1; then echo "FAIL: numb_steps 0 without init_model accepted"; exit 1; fi
grep -q "numb_steps 0 trains nothing" $D/test0b.log || { echo "FAIL: the numb_steps 0 refusal does not say why"; cat $D/test0b.log; exit 1; }
echo "numb_steps 0: dp test of init_model = the training run's; refused without a model: OK"
if $SURGE train inputs/deepmd/pair.yaml -deepmd_numb_step 5 > $D/typo.log 2>&1; then echo "FAIL: misspelled key accepted"; exit 1; fi
grep -q "numb_steps" $D/typo.log || { echo "FAIL: the error does not name deepmd_numb_steps"; cat $D/typo.log; exit 1; }
echo "misspelled key rejected: OK"
