#!/usr/bin/env bash
# Bit-identical restart (1 and 2 ranks): 120 steps straight vs 60 steps, then -restart to step
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
{ test "$(grep -c "vlasov final" full.log)" = 7 && grep -q "vlasov fit growth: gamma" part2.log; } || { echo "FAIL  report incomplete"; exit 1; }
# the same on 2 ranks (the DMDA split of f is written and read back through the checkpoint)
$MPIEXEC $SURGE run $args -sim_max_steps 120 -sim_output full2 > full2.log 2>&1 || { tail -20 full2.log; exit 1; }
$MPIEXEC $SURGE run $args -sim_max_steps 60 -sim_output part2r > p1.log 2>&1 || { tail -20 p1.log; exit 1; }
cp part2r.chk.h5 part2r60.chk.h5
$MPIEXEC $SURGE run $args -sim_max_steps 120 -sim_output part2r -restart part2r60.chk.h5 > p2.log 2>&1 || { tail -20 p2.log; exit 1; }
diff <(grep -E "vlasov (final|fit)" full2.log) <(grep -E "vlasov (final|fit)" p2.log) || { echo "FAIL  2-rank restarted run differs"; exit 1; }
echo "ok    2 ranks: final diagnostics and fit identical after restart"
