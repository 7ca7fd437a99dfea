#!/usr/bin/env bash
# Refused sst decks: one "surge: error:" line naming the option, exit 1, on 1 and 2 ranks, no file.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$ROOT/bin/surge}
MPIEXEC=${MPIEXEC:-"mpiexec -n 2 --oversubscribe"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
d=$ROOT/build/test-sst/bad_input; rm -rf "$d"; mkdir -p "$d"; cd "$d"
cases=(
  "-sst_cells 360|-sst_cells needs two entries"
  "-sst_flow swirl|-sst_flow: 'swirl' is not one of"
  "-sst_land moon|-sst_land: 'moon' is not one of"
  "-sst_harmonic_m 40|-sst_harmonic_m 40 is not resolved by 72 longitudes"
  "-sst_kappa -1|-sst_kappa = -1"
  "-sst_weather_modes 65|-sst_weather_modes = 65"
  "-sim_dt 20|exceeds the solver's stable step"
  "-sst_cells 65536,65536|-sst_cells asks for 4.295e+09 grid cells"
)
for ranks in 1 2; do
  L=""; [ $ranks = 2 ] && L="$MPIEXEC"
  sel=("${cases[@]}"); [ $ranks = 2 ] && sel=("${cases[0]}" "${cases[6]}")
  for c in "${sel[@]}"; do
    args=${c%%|*}; want=${c#*|}
    rc=0; $L $SURGE run $ROOT/inputs/sst/small.yaml $args -sim_output bad > out.txt 2>&1 || rc=$?
    [ $rc = 1 ] || { cat out.txt; echo "FAIL  $args: exit $rc (want 1)"; exit 1; }
    grep -q "^surge: error: .*$want" out.txt || { cat out.txt; echo "FAIL  $args: no 'surge: error:' line with '$want'"; exit 1; }
    ! grep -qiE "traceback|PETSC ERROR|signal" out.txt || { cat out.txt; echo "FAIL  $args: traceback"; exit 1; }
    [ -z "$(ls bad.* 2>/dev/null)" ] || { echo "FAIL  $args: files created"; exit 1; }
    echo "ok    $ranks rank(s) $args -> $(head -1 out.txt | cut -c1-110)"
  done
done
