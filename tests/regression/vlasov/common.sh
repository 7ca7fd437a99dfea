# Helpers for the Vlasov regression tests (sourced). Each test runs in its own scratch directory
# under build/ and reads the numbers the solver's end-of-run report prints (%.17g).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
SURGE=${SURGE:-$ROOT/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
DECKS=$ROOT/inputs/vlasov

scratch() { # scratch NAME: fresh directory, cd into it
  local d=$ROOT/build/test-vlasov/$1
  rm -rf "$d"; mkdir -p "$d"; cd "$d"
}
# field LOGFILE PATTERN N: the N-th whitespace field of the first line matching PATTERN
field() { grep -m1 -- "$2" "$1" | awk -v n="$3" '{print $n}'; }
# final LOGFILE NAME: final value of diagnostic NAME; drift LOGFILE NAME: its relative change
final() { awk -v k="$2" '$1=="vlasov" && $2=="final:" && $3==k {print $4}' "$1"; }
drift() { awk -v k="$2" '$1=="vlasov" && $2=="final:" && $3==k {gsub(/\)/,"",$7); print $7}' "$1"; }
# check WHAT VALUE OP LIMIT: awk comparison of |VALUE| against LIMIT, prints and fails on violation
check() {
  local what=$1 val=$2 op=$3 lim=$4
  # a missing or non-numeric value (report line absent, nan) is a failure, never a silent 0
  if ! [[ "$val" =~ ^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]]; then echo "FAIL  $what: no numeric value ('$val')"; exit 1; fi
  if awk -v v="$val" -v l="$lim" -v op="$op" 'BEGIN{a=v<0?-v:v; ok=(op=="<")?(a<l):(a>l); exit ok?0:1}'; then
    echo "ok    $what = $val ($op $lim)"
  else
    echo "FAIL  $what = $val (want |value| $op $lim)"; exit 1
  fi
}
