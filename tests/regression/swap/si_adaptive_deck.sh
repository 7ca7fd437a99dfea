#!/bin/bash
# inputs/swap/si_adaptive.yaml runs from a plain clone with the shipped Deep Potentials
# (inputs/swap/models), 100 steps, and does what its name and docs/swap.md say:
#  cold: at 1000 K, inside the training range, the four models agree and the surrogate serves every
#        one of the 101 force evaluations: 0 by tight binding, 0 switches, no retraining frames;
#  hot:  at 3600 K, outside it, the models disagree and tight binding must take over at least once:
#        switches > 0, 0 < TB evaluations < 101, the two counts add up to 101, frames written.
# The counts are read from the run's one "md swap:" summary line; a line that does not parse fails.
set -e
cd "$(dirname "$0")/../../.."
D=build/tmp/si_adaptive_deck; rm -rf $D; mkdir -p $D
bin/surge run inputs/swap/si_adaptive.yaml -sim_max_steps 100 -sim_output $D/cold -md_retrain_file $D/cold_retrain.h5 > $D/cold.log
bin/surge run inputs/swap/si_adaptive.yaml -sim_max_steps 100 -sim_output $D/hot -md_retrain_file $D/hot_retrain.h5 \
  -md_velocity_temperature 3600 > $D/hot.log
# counts RUN: sets tb, dp, sw, frames from "md swap: tb (solver) served N force evaluations, deepmd
# (surrogate) N (fraction F); N switches, N surrogate answers rejected; N frames appended to FILE"
counts() {
  local line
  line=$(grep -m1 "^md swap: " $D/$1.log) || { echo "FAIL: the $1 run printed no 'md swap:' line"; cat $D/$1.log; exit 1; }
  echo "$1: $line"
  local re='^md swap: tb \(solver\) served ([0-9]+) force evaluations, deepmd \(surrogate\) ([0-9]+) \(fraction [0-9.]+\); ([0-9]+) switches, [0-9]+ surrogate answers rejected; ([0-9]+) frames appended'
  [[ $line =~ $re ]] || { echo "FAIL: the $1 run's 'md swap:' line does not parse"; exit 1; }
  tb=${BASH_REMATCH[1]} dp=${BASH_REMATCH[2]} sw=${BASH_REMATCH[3]} frames=${BASH_REMATCH[4]}
}
counts cold
[ "$tb" -eq 0 ] && [ "$dp" -eq 101 ] && [ "$sw" -eq 0 ] && [ "$frames" -eq 0 ] && [ ! -s $D/cold_retrain.h5 ] || {
  echo "FAIL: at 1000 K (inside the training range) the surrogate must serve all 101 evaluations with 0 switches and no retraining frames (tb $tb, deepmd $dp, switches $sw, frames $frames)"; exit 1; }
counts hot
[ "$sw" -gt 0 ] && [ "$tb" -gt 0 ] && [ "$tb" -lt 101 ] && [ $((tb + dp)) -eq 101 ] && [ "$frames" -gt 0 ] && [ -s $D/hot_retrain.h5 ] || {
  echo "FAIL: at 3600 K tight binding must serve some but not all of the 101 evaluations, with switches and retraining frames (tb $tb, deepmd $dp, switches $sw, frames $frames)"; exit 1; }
echo PASS
