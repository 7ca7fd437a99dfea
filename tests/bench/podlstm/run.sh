#!/bin/bash
# POD-LSTM with architecture search on the weekly SST data (docs/podlstm.md): figures, not pass/fail.
#   1. the data set (inputs/sst/ensemble_weekly.yaml), if build/bench/podlstm has none yet (~4 min)
#   2. aging evolution and random search, 40 candidates each, on 2 ranks (inputs/podlstm/sst_search.yaml)
#   3. the same random search (the same 40 candidates: proposals depend on (seed, id) only) on 1 rank
#   4. report.py: best validation R2 vs evaluations, worker utilisation, 1 vs 2 ranks, a model of the
#      search on up to 512 ranks calibrated on the measured times, test RMSE of every method and lead,
#      figures docs/podlstm_search.png, docs/podlstm_scaling.png, docs/podlstm_rmse.png
#   5. swap.py: the aging search's model swapped in for the solver (field.advance) over the 700 test
#      weeks: speed-up and error growth against the solver alone, docs/podlstm_swap.png (~12 min)
# Runs resume from their logs (build/bench/podlstm/*.search): kill it and run it again to go on.
# ~50 min niced on the 2 shared cores. PODLSTM_BENCH_EVALS changes the budget (e.g. 12 for a try).
set -e
cd "$(dirname "$0")/../../.."
. tests/bench/require.sh
bench_require_py podlstm matplotlib python3-matplotlib # report.py's and swap.py's figures
make -s bin/surge >/dev/null || { echo "bench podlstm: cannot build bin/surge (run ./configure first)"; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
E=${PODLSTM_BENCH_EVALS:-40}
W=build/bench/podlstm
mkdir -p $W
S="nice -n 5 ../../../bin/surge"
M="nice -n 5 mpiexec -n 2 --oversubscribe ../../../bin/surge"
D=../../../inputs
cd $W
if [ ! -f sst_weekly.h5 ]; then
  echo "== the SST data set (inputs/sst/ensemble_weekly.yaml)"
  $S ensemble $D/sst/ensemble_weekly.yaml | tail -1
fi
run() { # run NAME LAUNCHER ARGS...: one search, its log in NAME.log
  local name=$1 launch=$2; shift 2
  echo "== $name"
  $launch train $D/podlstm/sst_search.yaml -podlstm_evaluations $E -podlstm_prefix $name -train_output $name "$@" > $name.log 2>&1 || { tail -20 $name.log; exit 1; }
  grep -E "podlstm search: [0-9]+ evaluations|POD-LSTM \(searched\)" $name.log
}
run aging2 "$M" -podlstm_search aging
run random2 "$M" -podlstm_search random -podlstm_baselines 0
run random1 "$S" -podlstm_search random -podlstm_baselines 0
cd - >/dev/null
/usr/bin/python3 tests/bench/podlstm/report.py $W
# 5. the swap: POD-LSTM (the aging search's model) in for the 1-degree solver over the 700 test weeks
/usr/bin/python3 tests/bench/podlstm/swap.py $W $W/aging2.h5
