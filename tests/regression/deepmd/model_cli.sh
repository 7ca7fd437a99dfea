#!/bin/bash
# surge model test | compress | info | devi (DeePMD-kit's dp test, dp compress, model summary,
# dp model_devi) on two small Deep Potentials trained from different seeds on the Morse-pair data:
#   test      the command line gives the RMSE lines and dp test -d files of the library's dp test
#             (what test_deepmd_tool dptest calls), the same on 1 and 2 ranks;
#   compress  a model file whose table is rebuilt on load: its test equals the uncompressed model
#             tabulated with the same step (identical lines), and info says so;
#   devi      the deviation of the two models over an H5MD trajectory equals the one the MD engine
#             recorded during that run (md_model_devi_every, an independent code path through the
#             md.forces provider) to the 7 printed digits (tolerance 2e-6 relative: %.6e rounding);
#   refusals  a missing model, too few models, an unknown verb: one surge: error: line, exit 1.
set -e
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
D=build/tmp/deepmd_model_cli
rm -rf $D; mkdir -p $D
build/tests/test_deepmd_train data $D > /dev/null
for s in 3 7; do
  $SURGE train inputs/deepmd/pair.yaml -deepmd_data $D/pair_train.h5 -deepmd_valid_data $D/pair_valid.h5 \
    -deepmd_seed $s -train_output $D/m$s > $D/train$s.log
done
# test
$SURGE model test $D/m3.h5 $D/pair_valid.h5 -detail $D/a > $D/test.log
build/tests/test_deepmd_tool dptest $D/m3.h5 -detail $D/b $D/pair_valid.h5 > $D/tool.log
$MPI $SURGE model test $D/m3.h5 $D/pair_valid.h5 > $D/test2.log
grep -i rmse $D/test.log
diff <(grep -i "rmse\|mae" $D/test.log) <(grep -i "rmse\|mae" $D/tool.log)
diff <(grep -i "rmse\|mae" $D/test.log) <(grep -i "rmse\|mae" $D/test2.log)
for x in e e_peratom f; do cmp $D/a.$x.out $D/b.$x.out; done
echo "ok    model test = library dp test (lines and detail files), 1 = 2 ranks"
# compress
$SURGE model compress $D/m3.h5 $D/m3c.h5 -step 0.002
$SURGE model test $D/m3c.h5 $D/pair_valid.h5 > $D/testc.log
build/tests/test_deepmd_tool dptest $D/m3.h5 -compress 0.002 $D/pair_valid.h5 > $D/toolc.log
grep -qi "rmse" $D/testc.log || { echo "FAIL: model test of the compressed model printed no RMSE"; cat $D/testc.log; exit 1; }
diff <(grep -i "rmse\|mae" $D/testc.log) <(grep -i "rmse\|mae" $D/toolc.log)
$SURGE model info $D/m3c.h5 | tee $D/info.log | grep -q "compressed     table step 0.002"
$SURGE model info $D/m3.h5 | grep -q "type_map"
echo "ok    model compress: stored table = tabulated on the fly; info reports it"
# devi: an MD run that records the deviation and writes its trajectory at the same steps
build/tests/test_deepmd_tool xyz $D/pair_valid.h5 0 2 $D/pair.xyz
$SURGE run inputs/deepmd/pair_md.yaml -md_read_xyz $D/pair.xyz -md_deepmd_models $D/m3.h5,$D/m7.h5 -sim_max_steps 40 \
  -md_model_devi_every 5 -md_model_devi_file $D/md_devi.out -md_traj_file $D/traj.h5md -md_traj_every 5 -sim_output $D/md > $D/md.log
$SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/cli_devi.out
$MPI $SURGE model devi $D/m3.h5 $D/m7.h5 $D/traj.h5md $D/cli_devi2.out
cmp $D/cli_devi.out $D/cli_devi2.out
/usr/bin/python3 - $D <<'PY'
import sys, numpy as np
d = sys.argv[1]
a, b = np.loadtxt(f"{d}/md_devi.out"), np.loadtxt(f"{d}/cli_devi.out")
ok = a.shape == b.shape and np.array_equal(a[:, 0], b[:, 0])
err = np.max(np.abs(a[:, 1:] - b[:, 1:]) / np.maximum(np.abs(a[:, 1:]), 1e-300)) if ok else np.inf
print(f"model devi over {len(b)} frames vs the MD engine's record: max rel. diff {err:.1e} (tol 2e-6)")
sys.exit(0 if ok and err < 2e-6 else 1)
PY
# refusals
for args in "test $D/nosuch.h5 $D/pair_valid.h5" "devi $D/m3.h5 $D/traj.h5md $D/x.out" "frobnicate $D/m3.h5"; do
  if $SURGE model $args > $D/bad.log 2>&1; then echo "FAIL: surge model $args accepted"; exit 1; fi
  [ "$(grep -c '^surge: error:' $D/bad.log)" = 1 ] || { echo "FAIL: surge model $args:"; cat $D/bad.log; exit 1; }
  head -1 $D/bad.log
done
echo PASS
