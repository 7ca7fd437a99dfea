#!/bin/bash
# Independent PyTorch re-implementation vs surge's C API on the pair-potential model file (see
# torch_crosscheck.py): one frame of the validation set, |dE| < 1e-9 relative, |dF| < 1e-9 eV/A; for
# embedding nets per neighbour type (the deck) and per (centre, neighbour) type pair (type_one_side false).
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
D=build/tmp/deepmd_deck
mkdir -p $D
if [ ! -s $D/pair_model.h5 ]; then
  build/tests/test_deepmd_train data $D > /dev/null
  $SURGE train inputs/deepmd/pair.yaml > $D/one.log
fi
if [ ! -s $D/pair_model_tp.h5 ]; then
  $SURGE train inputs/deepmd/pair.yaml -deepmd_type_one_side false -train_output $D/pair_model_tp > $D/one_tp.log
fi
/usr/bin/python3 tests/regression/deepmd/torch_crosscheck.py $D/pair_model.h5 $D/pair_valid.h5 3
/usr/bin/python3 tests/regression/deepmd/torch_crosscheck.py $D/pair_model_tp.h5 $D/pair_valid.h5 3
