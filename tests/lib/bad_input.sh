# The refused-deck loop of the solvers' bad_input tests (sourced; tests/regression/{ks,sst,boussinesq}).
#
#   bad_input_run DECK "I J ..." CASE...
#
# Each CASE is "ARGS|WANT": `surge run DECK ARGS -sim_output bad`, run in the current (scratch) folder,
# must exit 1, print exactly one line "surge: error: ..." that matches WANT (a grep pattern after
# "surge: error: .*"), show no traceback, PETSc error or signal, and create no file bad.*. Every case
# runs on 1 rank; the cases whose 0-based indices are listed in the second argument run on 2 ranks
# too ($MPIEXEC; option parsing does not depend on the rank count, and each MPI start costs a second).
# The first failure ends the test (exit 1) with the output and what was wrong.
SURGE=${SURGE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

bad_input_fail() {
  cat out.txt
  echo "FAIL  $1"
  exit 1
}

bad_input_run() {
  local deck=$1 two=$2 ranks L args want rc n i
  shift 2
  local cases=("$@") sel
  for ranks in 1 2; do
    L=""
    sel=("${cases[@]}")
    if [ $ranks = 2 ]; then
      L=$MPIEXEC
      sel=()
      for i in $two; do sel+=("${cases[$i]}"); done
    fi
    for c in "${sel[@]}"; do
      args=${c%%|*}
      want=${c#*|}
      rc=0
      $L "$SURGE" run "$deck" $args -sim_output bad > out.txt 2>&1 || rc=$?
      [ $rc = 1 ] || bad_input_fail "$ranks rank(s) $args: exit $rc (want 1)"
      n=$(grep -c '^surge: error:' out.txt || true)
      [ "$n" = 1 ] || bad_input_fail "$ranks rank(s) $args: $n 'surge: error:' lines (want exactly one)"
      grep -q "^surge: error: .*$want" out.txt || bad_input_fail "$ranks rank(s) $args: no 'surge: error:' line with '$want'"
      ! grep -qiE "traceback|PETSC ERROR|signal" out.txt || bad_input_fail "$ranks rank(s) $args: traceback"
      [ -z "$(ls bad.* 2> /dev/null)" ] || bad_input_fail "$ranks rank(s) $args: files created: $(ls bad.*)"
      echo "ok    $ranks rank(s) $args -> $(head -1 out.txt | cut -c1-110)"
    done
  done
}
