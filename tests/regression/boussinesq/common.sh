# Helpers for the Boussinesq shell tests (sourced): scratch folders under build/, 2-rank launcher.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
SURGE=${SURGE:-$ROOT/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
DECKS=$ROOT/inputs/boussinesq
scratch() { local d=$ROOT/build/test-boussinesq/$1; rm -rf "$d"; mkdir -p "$d"; cd "$d"; }
# run LOG ARGS...: surge run, failing the test with the log's tail
run() { local log=$1; shift; "$@" > "$log" 2>&1 || { tail -20 "$log"; echo "FAIL  $*"; exit 1; }; }
