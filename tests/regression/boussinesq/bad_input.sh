#!/usr/bin/env bash
# Refused decks: one "surge: error:" line naming the option, exit 1, on 1 and 2 ranks, and no file
# created (checks run before the output is opened). The loop: tests/lib/bad_input.sh.
source "$(dirname "$0")/common.sh"
source "$ROOT/tests/lib/bad_input.sh"
scratch bad_input
cases=(
  "-boussinesq_cells 33,17|nx = 33 must be even"
  "-boussinesq_cells 32,5|nz = 5 is too small"
  "-boussinesq_cells 32|-boussinesq_cells needs two entries"
  "-boussinesq_length 2|-boussinesq_length needs two entries"
  "-boussinesq_walls sticky|-boussinesq_walls: 'sticky' is not one of"
  "-boussinesq_scheme RK111|-boussinesq_scheme: 'RK111' is not one of"
  "-boussinesq_rayleigh -5|-boussinesq_rayleigh = -5"
  "-boussinesq_cells 4096,1024|GB per rank"
  "-boussinesq_noise 2|-boussinesq_noise = 2"
)
bad_input_run $DECKS/rb_ra1e4.yaml "0 1 2 7" "${cases[@]}"
