#!/usr/bin/env bash
# Refused ks decks: exit 1, one "surge: error:" line naming the option, no traceback, no file written;
# on 1 and 2 ranks.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$ROOT/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
d=$ROOT/build/test-ks/bad_input; rm -rf "$d"; mkdir -p "$d"; cd "$d"
cases=(
  "-ks_length 0|-ks_length = 0"
  "-ks_length -22|-ks_length = -22"
  "-ks_length nan|-ks_length"
  "-ks_modes 63|-ks_modes 63 is odd"
  "-ks_modes 6|-ks_modes = 6"
  "-ks_dt 0|-ks_dt = 0"
  "-ks_lyap_every 0|-ks_lyap_every = 0"
)
for ranks in 1 2; do
  L=""; [ $ranks = 2 ] && L="$MPIEXEC"
  sel=("${cases[@]}"); [ $ranks = 2 ] && sel=("${cases[0]}" "${cases[3]}")
  for c in "${sel[@]}"; do
    args=${c%%|*}; want=${c#*|}
    rc=0; $L $SURGE run $ROOT/inputs/ks/ks22.yaml $args -sim_output bad > out.txt 2>&1 || rc=$?
    [ $rc = 1 ] || { cat out.txt; echo "FAIL  $args: exit $rc (want 1)"; exit 1; }
    [ "$(grep -c '^surge: error:' out.txt)" = 1 ] || { cat out.txt; echo "FAIL  $args: want exactly one 'surge: error:' line"; exit 1; }
    grep -q "^surge: error: .*$want" out.txt || { cat out.txt; echo "FAIL  $args: no 'surge: error:' line with '$want'"; exit 1; }
    ! grep -qiE "traceback|PETSC ERROR|signal" out.txt || { cat out.txt; echo "FAIL  $args: traceback"; exit 1; }
    [ -z "$(ls bad.* 2>/dev/null)" ] || { echo "FAIL  $args: files created"; exit 1; }
    echo "ok    $ranks rank(s) $args -> $(head -1 out.txt | cut -c1-110)"
  done
done
