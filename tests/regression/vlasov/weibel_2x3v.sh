#!/usr/bin/env bash
# Weibel instability in 2x3v, p = 1 (inputs/vlasov/weibel_2x3v.yaml; issue 39): the magnetic-energy
# growth rate, fitted over t in [15, 35], against the root of the kinetic transverse dispersion
# relation (Faddeeva function; k = 0.4 along x, so the 1x2v relation holds: 0.098485) within 2 %
# (the issue's tolerance; measured 1.6e-3), on 1 rank and on 2 ranks; the two runs' final diagnostics
# agree to 1e-12 of the energy scale; particle number conserved to 1e-12 (central fluxes, p = 1: the
# total energy is not conserved at p = 1 and is not asserted; docs/vlasov.md). ~4.5 s CPU per run.
source "$(dirname "$0")/common.sh"
scratch weibel_2x3v
D=$DECKS/weibel_2x3v.yaml
$SURGE run $D -sim_output a > a.log 2>&1 || { tail -20 a.log; exit 1; }
$MPIEXEC $SURGE run $D -sim_output b > b.log 2>&1 || { tail -20 b.log; exit 1; }
growth_vs_root "2x3v Weibel" a.log b.log
check "2x3v Weibel root k=0.4 is 0.0985 (the 1x2v root)" "$(awk '/gamma measured/ {print $8 - 0.0985}' a.log)" "<" 5e-4
check "particle number drift" "$(drift a.log number_elc)" "<" 1e-12
check "magnetic energy grew x100" "$(drift a.log magnetic_energy)" ">" 100
ranks_equal a.log b.log "2x3v Weibel"
