#!/bin/bash
# surge's own Deep Potential trainer with DeePMD-kit's other activations and exclude_types, end to end
# on the Morse-pair data (the graph's backward passes and weight gradients against finite differences
# are test_deepmd_physics -act/-fit_act/-excl, deepmd_physics_acts):
#   train    gelu/gelu (se_e2_a, 1 and 2 ranks), softplus/relu with exclude_types [[0, 1]] (type-pair
#            nets) and gelu/sigmoid se_e2_r train: the force RMSE on the validation frames falls below
#            0.7 of the untrained model's (bar; measured in docs/deepmd.md), 2 ranks = 1 rank to 1e-12;
#   export   each trained model -> DeePMD-kit .dp and .yaml -> import: the same model file (cmp), the
#            same dp test lines (energies to all printed digits);
#   PyTorch  the exported .yaml evaluated by tests/regression/deepmd/dp_reference.py (independent
#            PyTorch code from DeePMD-kit's dpmodel semantics, autograd forces) on a periodic and an open
#            frame: surge's import reproduces atomic energies, forces and atomic virials to 1e-10;
#   stats    davg/dstd stored by the trainer = numpy's computation from the training data by DeePMD-kit's
#            rule (stats_check.py), without and with exclude_types, to 1e-12 relative;
#   refusal  exclude_types with se_e2_r, an odd-length exclude_types, an unknown activation: one line.
set -e
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
MPI=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
D=build/tmp/deepmd_train_acts
rm -rf $D; mkdir -p $D
build/tests/test_deepmd_train data $D > /dev/null
DATA="-deepmd_data $D/pair_train.h5 -deepmd_valid_data $D/pair_valid.h5"
# a test frame for the PyTorch reference: 18 atoms of types A/B on a jittered lattice in an 8 A box,
# periodic and open (DeePMD-kit's testcase layout)
/usr/bin/python3 - $D/testcase.yaml <<'PY'
import sys, yaml, numpy as np
rng = np.random.default_rng(5)
g = np.array([[i, j, k] for i in range(3) for j in range(3) for k in range(2)], float) * [2.6, 2.6, 4.0]
x = (g + 0.5 + rng.uniform(-0.3, 0.3, g.shape)).round(6)
t = [int(v) for v in rng.integers(0, 2, len(x))]
blk = lambda box: {"coord": x.ravel().tolist(), "atype": t, "box": box}
yaml.safe_dump({"type_map": ["A", "B"], "results": [blk([8.0, 0, 0, 0, 8.0, 0, 0, 0, 8.0]), blk(None)]}, open(sys.argv[1], "w"))
PY
frmse() { grep "Force  RMSE" $1 | tail -1 | awk '{print $4}'; }
check() { # NAME EXTRA...: train, score, export/import round trip, PyTorch reference
  local name=$1; shift
  $SURGE train inputs/deepmd/pair.yaml $DATA -deepmd_numb_steps 1 "$@" -train_output $D/${name}_0 > $D/${name}_0.txt
  $SURGE train inputs/deepmd/pair.yaml $DATA "$@" -train_output $D/$name > $D/$name.txt
  local f0=$(frmse $D/${name}_0.txt) f=$(frmse $D/$name.txt)
  /usr/bin/python3 -c "import sys; f0, f = $f0, $f; print(f'      $name: validation force RMSE {f0:.4f} after 1 step -> {f:.4f} eV/A after 200 (bar 0.7x)'); sys.exit(0 if f < 0.7 * f0 else 1)"
  $SURGE model export $D/$name.h5 $D/$name.dp > /dev/null
  $SURGE model export $D/$name.h5 $D/$name.yaml > /dev/null
  $SURGE model import $D/$name.dp $D/${name}_dp.h5 > /dev/null
  $SURGE model import $D/$name.yaml $D/${name}_yaml.h5 > /dev/null
  cmp $D/$name.h5 $D/${name}_dp.h5
  cmp $D/$name.h5 $D/${name}_yaml.h5
  $SURGE model test $D/$name.h5 $D/pair_valid.h5 > $D/${name}_a.log
  $SURGE model test $D/${name}_dp.h5 $D/pair_valid.h5 > $D/${name}_b.log
  grep -q "Energy RMSE " $D/${name}_a.log
  diff <(grep -i "rmse\|mae" $D/${name}_a.log) <(grep -i "rmse\|mae" $D/${name}_b.log)
  /usr/bin/python3 tests/regression/deepmd/dp_reference.py eval $D/testcase.yaml $D/$name.yaml
  build/tests/test_deepmd_interop fixture $D/${name}_dp.h5 $D/${name}_ref.yaml | sed 's/^/      /'
}
# the reference's se_e2_r path against DeePMD-kit's own se_r fixture (its reference values, through the import)
cp tests/data/deepmd_kit/deeppot-r.yaml $D/fixture_r.yaml
$SURGE model import $D/fixture_r.yaml $D/fixture_r.h5 > /dev/null
/usr/bin/python3 tests/regression/deepmd/dp_reference.py eval tests/data/deepmd_kit/deeppot-r-testcase.yaml $D/fixture_r.yaml
build/tests/test_deepmd_interop fixture $D/fixture_r.h5 tests/data/deepmd_kit/deeppot-r-testcase.yaml | tail -1 | sed 's/^/      /'
build/tests/test_deepmd_interop fixture $D/fixture_r.h5 $D/fixture_r_ref.yaml | tail -1 | sed 's/^/      /'
check gelu -deepmd_activation_function gelu -deepmd_fitting_activation_function gelu
check excl -deepmd_activation_function softplus -deepmd_fitting_activation_function relu -deepmd_exclude_types 0,1 -deepmd_type_one_side false
check r_gelu -deepmd_descriptor se_e2_r -deepmd_fitting_neuron 24,24 -deepmd_activation_function gelu -deepmd_fitting_activation_function sigmoid
grep -q 'activation_function' $D/gelu.yaml
echo "ok    trained with gelu, softplus/relu + exclude_types, se_e2_r gelu/sigmoid; export -> import identical; = PyTorch reference to 1e-10"
# the descriptor statistics the trainer computed from the data (davg/dstd, stats.c) against an
# independent numpy computation of DeePMD-kit's rule (stats_check.py; the first stat_frames = 20 frames,
# inputs/deepmd/pair.yaml), without and with exclude_types
for name in gelu excl; do /usr/bin/python3 tests/regression/deepmd/stats_check.py $D/${name}_0.h5 $D/pair_train.h5 20; done
echo "ok    davg/dstd of surge train = numpy (DeePMD-kit's EnvMatStatSe rule) to 1e-12"
# 2 ranks = 1 rank (data-parallel training with the new activations)
$MPI $SURGE train inputs/deepmd/pair.yaml $DATA -deepmd_activation_function gelu -deepmd_fitting_activation_function gelu \
  -deepmd_numb_steps 20 -train_output $D/gelu2 > $D/gelu2.txt
$SURGE train inputs/deepmd/pair.yaml $DATA -deepmd_activation_function gelu -deepmd_fitting_activation_function gelu \
  -deepmd_numb_steps 20 -train_output $D/gelu1 > $D/gelu1.txt
/usr/bin/python3 - $D <<'PY'
import sys, h5py, numpy as np
d = sys.argv[1]
a, b = (h5py.File(f"{d}/gelu{k}.h5")["params"][()] for k in (1, 2))
err = np.max(np.abs(a - b)) / np.max(np.abs(a))
print(f"      gelu, 20 steps: 2 ranks vs 1 rank, max rel. parameter diff {err:.1e} (bar 1e-12)")
sys.exit(0 if err < 1e-12 else 1)
PY
# refusals
for args in "-deepmd_descriptor se_e2_r -deepmd_exclude_types 0,1" "-deepmd_exclude_types 0,1,1" "-deepmd_activation_function swish"; do
  if $SURGE train inputs/deepmd/pair.yaml $DATA $args -train_output $D/bad > $D/bad.log 2>&1; then echo "FAIL: accepted: $args"; exit 1; fi
  [ "$(grep -c '^surge: error:' $D/bad.log)" = 1 ] || { echo "FAIL: $args:"; cat $D/bad.log; exit 1; }
  echo "      $(grep '^surge: error:' $D/bad.log | cut -c1-150)"
done
echo PASS
