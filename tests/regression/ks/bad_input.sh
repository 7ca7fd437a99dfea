#!/usr/bin/env bash
# Refused ks decks: exit 1, one "surge: error:" line naming the option, no traceback, no file written;
# on 1 and 2 ranks (the loop: tests/lib/bad_input.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
source "$ROOT/tests/lib/bad_input.sh"
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
bad_input_run $ROOT/inputs/ks/ks22.yaml "0 3" "${cases[@]}"
