#!/usr/bin/env bash
# Bump-on-tail instability (inputs/vlasov/bumpontail.yaml): fitted growth rate within 3% of the
# unstable kinetic root the solver computes for the deck (measured 0.3%), number to 1e-12.
source "$(dirname "$0")/common.sh"
scratch bumpontail
$SURGE run $DECKS/bumpontail.yaml -sim_field_every 0 > run.log 2>&1 || { tail -20 run.log; exit 1; }
grep "vlasov fit" run.log
g=$(field run.log "gamma measured" 6); gt=$(field run.log "gamma measured" 8)
check "theory growth rate is positive" "$gt" ">" 0.05
check "growth rate rel. error" "$(awk -v a=$g -v b=$gt 'BEGIN{print (a-b)/b}')" "<" 0.03
check "number drift" "$(drift run.log number_elc)" "<" 1e-12
