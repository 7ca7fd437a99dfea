#!/usr/bin/env bash
# Two-stream instability (inputs/vlasov/twostream.yaml): linear growth rate of the field energy
# within 3% of the unstable root of the kinetic dispersion relation that the solver computes for
# the deck's beams (root checked against the cold-beam limit in test_vlasov_dispersion), and
# particle number conserved to 1e-12.
source "$(dirname "$0")/common.sh"
scratch twostream
$SURGE run $DECKS/twostream.yaml > run.log 2>&1 || { tail -20 run.log; exit 1; }
grep "vlasov fit" run.log
g=$(field run.log "gamma measured" 6); gt=$(field run.log "gamma measured" 8)
check "theory growth rate is positive" "$gt" ">" 0.1
check "growth rate rel. error" "$(awk -v a=$g -v b=$gt 'BEGIN{print (a-b)/b}')" "<" 0.03
check "number drift" "$(drift run.log number_elc)" "<" 1e-12
check "total energy drift" "$(drift run.log total_energy)" "<" 1e-9
