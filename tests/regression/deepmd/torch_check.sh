#!/bin/bash
# Independent PyTorch re-implementation vs surge's C API on the pair-potential model file (see
# torch_crosscheck.py): one frame of the validation set, |dE| < 1e-9 relative, |dF| < 1e-9 eV/A.
set -e
cd "$(dirname "$0")/../../.."
SURGE=${SURGE:-bin/surge}
D=build/tmp/deepmd_deck
mkdir -p $D
if [ ! -s $D/pair_model.h5 ]; then
  build/tests/test_deepmd_train data $D > /dev/null
  $SURGE train inputs/deepmd/pair.yaml > $D/one.log
fi
/usr/bin/python3 tests/regression/deepmd/torch_crosscheck.py $D/pair_model.h5 $D/pair_valid.h5 3
