#!/bin/bash
# inputs/swap/si_adaptive.yaml runs from a plain clone with the shipped Deep Potentials
# (inputs/swap/models), 100 steps: at 1000 K inside the training range, and at 3600 K, outside it,
# where the four models disagree and tight binding must take over at least once (switches > 0,
# retraining frames written) — the deck does what its name says.
set -e
cd "$(dirname "$0")/../../.."
D=build/tmp/si_adaptive_deck; rm -rf $D; mkdir -p $D
bin/surge run inputs/swap/si_adaptive.yaml -sim_max_steps 100 -sim_output $D/cold -md_retrain_file $D/cold_retrain.h5 > $D/cold.log
bin/surge run inputs/swap/si_adaptive.yaml -sim_max_steps 100 -sim_output $D/hot -md_retrain_file $D/hot_retrain.h5 \
  -md_velocity_temperature 3600 > $D/hot.log
grep "md swap" $D/cold.log $D/hot.log
sw=$(grep -o "[0-9]* switches" $D/hot.log | awk '{print $1}')
[ "${sw:-0}" -gt 0 ] && [ -s $D/hot_retrain.h5 ] || { echo "FAIL: the hot run never handed a step to tight binding"; exit 1; }
echo PASS
