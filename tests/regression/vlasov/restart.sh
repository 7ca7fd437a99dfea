#!/usr/bin/env bash
# Bit-identical restart: 120 steps straight vs 60 steps, then -restart from the checkpoint to step
# 120 (same rank count). Every final diagnostic (%.17g), the fitted rates and the final f in the
# checkpoint must be identical: the state, the field-energy history the fit uses and the initial
# diagnostics all travel in the checkpoint, and nothing depends on run history otherwise.
source "$(dirname "$0")/common.sh"
scratch restart
args="$DECKS/landau.yaml -sim_t_end 1e9 -vlasov_fit growth -vlasov_fit_window 0,2 -sim_field_every 0"
$SURGE run $args -sim_max_steps 120 -sim_output full > full.log 2>&1 || { tail -20 full.log; exit 1; }
$SURGE run $args -sim_max_steps 60 -sim_output part > part1.log 2>&1 || { tail -20 part1.log; exit 1; }
cp part.chk.h5 part60.chk.h5
$SURGE run $args -sim_max_steps 120 -sim_output part -restart part60.chk.h5 > part2.log 2>&1 || { tail -20 part2.log; exit 1; }
diff <(grep -E "vlasov (final|fit)" full.log) <(grep -E "vlasov (final|fit)" part2.log) || { echo "FAIL  restarted run differs"; exit 1; }
echo "ok    final diagnostics and fit identical"
h5dump -d /state/f_elc full.chk.h5 > f_full.txt 2>/dev/null || h5dump full.chk.h5 > f_full.txt
h5dump -d /state/f_elc part.chk.h5 > f_part.txt 2>/dev/null || h5dump part.chk.h5 > f_part.txt
cmp <(grep -v HDF5 f_full.txt) <(grep -v HDF5 f_part.txt) || { echo "FAIL  checkpointed f differs"; exit 1; }
echo "ok    checkpointed f identical"
test "$(grep -c "vlasov final" full.log)" = 6 && grep -q "vlasov fit growth: gamma" part2.log
