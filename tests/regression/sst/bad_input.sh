#!/usr/bin/env bash
# Refused sst decks: one "surge: error:" line naming the option, exit 1, on 1 and 2 ranks, no file
# (the loop: tests/lib/bad_input.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
source "$ROOT/tests/lib/bad_input.sh"
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
bad_input_run $ROOT/inputs/sst/small.yaml "0 6" "${cases[@]}"
