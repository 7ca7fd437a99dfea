#!/bin/bash
# run.sh -- the architecture search of docs/podlstm.md on every core of a machine without PETSc and MPI,
# from the archive that bundle.sh made (surge.tar.xz beside this script); figures, not pass/fail. Run it
# from the root of a copy of the repository (the decks are read from inputs/):
#   bash DIR/run.sh OUTDIR [EVALUATIONS]        (default 256; SG_RANKS overrides the ranks: all cores, ≤ 16)
# On the 5-degree weekly SST data (made here, ~10 s): a 1-rank random search of 32 candidates, then aging
# evolution (population 40, tournaments of 10) and random search of EVALUATIONS candidates each on P
# ranks bound to cores, then, while less than SG_BUDGET seconds (default 300) have passed, aging
# evolution of the residual networks (base: var) on P ranks. Random search proposes from (seed, id)
# alone: the 1-rank run's candidates are the P-rank run's first 32, so their training times compare.
# OUTDIR gets the model files (their /search/evals: architecture, R2, start, end and seconds of every
# candidate; /scores: test RMSE of every method), the logs and machine.txt; summary.py beside this
# script reads them.
set -u
D=$(cd "$(dirname "$0")" && pwd)
REPO=$(pwd)
[ -f $REPO/inputs/podlstm/sst_search.yaml ] || { echo "run.sh: run it from the repository root"; exit 2; }
OUTD=$(realpath -m "${1:?usage: run.sh OUTDIR [EVALUATIONS]}")
N=${2:-256}
W=/tmp/sgnas
. $D/mpienv.sh
sg_unpack $D/surge.tar.xz $W || exit 2
S=$W/b/bin/surge
M="mpiexec --bind-to core --map-by core -n"
mkdir -p $W/run "$OUTD" && cd $W/run
sg_mpi $W "$M 2 $S run $REPO/inputs/sst/harmonic.yaml > smoke.log 2>&1" || { tail smoke.log; exit 2; }
P=${SG_RANKS:-$(env -u OMP_NUM_THREADS nproc)}; [ $P -gt 16 ] && P=16  # nproc obeys OMP_NUM_THREADS (mpienv.sh: 1)
echo "# $(nproc --all) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $SG_MPI_MODE; $P ranks bound to cores; $(date -u)" | tee "$OUTD/machine.txt"
RUNS=""
save() { # what a run left: its log and model file, or after a kill its search log (rank_*.h5: the evaluations so far)
  local n
  for n in $RUNS; do
    cp -f $n.log "$OUTD"/
    if [ -f $n.h5 ]; then cp -f $n.h5 "$OUTD"/; else mkdir -p "$OUTD/$n.search" && cp -f $n.search/rank_*.h5 "$OUTD/$n.search"/; fi
  done; }
trap save EXIT
T0=$SECONDS
$S ensemble $REPO/inputs/sst/ensemble_weekly_5deg.yaml > data.log 2>&1 || { tail data.log; exit 1; }
run() { # run NAME RANKS ARGS...: one search of the SST deck on the 5-degree data
  local name=$1 n=$2; shift 2
  RUNS="$RUNS $name"
  $M $n $S train $REPO/inputs/podlstm/sst_search.yaml -podlstm_data sst_weekly_5deg.h5 -podlstm_prefix $name \
    -train_output $name "$@" > $name.log 2>&1
  echo "$name: rc $? at $((SECONDS - T0)) s; $(grep -E 'POD-LSTM \(searched\)|^podlstm search: [0-9]+ evaluations' $name.log | tr -s ' ' | tr '\n' ';')" | tee -a "$OUTD/machine.txt"
}
run random1 1 -podlstm_search random -podlstm_evaluations 32 -podlstm_baselines 0
run aging$P $P -podlstm_search aging -podlstm_evaluations $N -podlstm_population 40 -podlstm_sample 10
run random$P $P -podlstm_search random -podlstm_evaluations $N
[ $((SECONDS - T0)) -lt ${SG_BUDGET:-300} ] && run agingvar$P $P -podlstm_search aging -podlstm_evaluations $((N / 2)) \
  -podlstm_population 40 -podlstm_sample 10 -podlstm_base var
exit 0
