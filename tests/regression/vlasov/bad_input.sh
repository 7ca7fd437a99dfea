#!/usr/bin/env bash
# Bad decks fail before any work with a message that names the problem and the fix.
source "$(dirname "$0")/common.sh"
scratch bad_input
expect_fail() { # expect_fail "PATTERN" ARGS...: exit 1 with one "surge: error:" line holding PATTERN, no traceback
  local pat=$1 rc=0; shift
  $SURGE run "$@" > out.log 2>&1 || rc=$?
  [ $rc -ne 0 ] || { echo "FAIL  accepted: $*"; exit 1; }
  [ $rc -eq 1 ] && [ "$(grep -c '^surge: error:' out.log)" = 1 ] && ! grep -qE "PETSC ERROR|runtime error|MPI_ABORT" out.log || {
    echo "FAIL  exit $rc with $(grep -c '^surge: error:' out.log) error lines (want exit 1, one line) for: $*"; tail -5 out.log; exit 1; }
  grep '^surge: error:' out.log | grep -q -- "$pat" || { echo "FAIL  no '$pat' in the error for: $*"; tail -5 out.log; exit 1; }
  echo "ok    rejected ($pat): ${*:2}"
}
D=$DECKS/landau.yaml
expect_fail "is not a positive cell count" $D -vlasov_cells 0,32
expect_fail "is not a positive cell count" $D -vlasov_cells 32,-4
expect_fail "does not hold its Maxwellian" $D -vlasov_lower 0,-3 -vlasov_upper 12.566370614359172,3
expect_fail "cannot resolve a Maxwellian" $D -vlasov_cells 32,4
expect_fail "above the SSP-RK3 stability limit" $D -vlasov_cfl 1.5
expect_fail "above the SSP-RK3 stability limit 1.227" $D -vlasov_order 1 -vlasov_cfl 1.3
expect_fail "is not one of: serendipity, tensor" $D -vlasov_basis hermite
expect_fail "No generated kernels for 2x2v tensor p=1" $DECKS/landau2d.yaml -vlasov_basis tensor -vlasov_order 1
expect_fail "would not be periodic" $D -vlasov_elc_k 0.6
expect_fail "needs 2 entries" $D -vlasov_cells 32,32,32
expect_fail "vdim >= cdim" $D -vlasov_cdim 2 -vlasov_vdim 1
expect_fail "but the run has 1 ranks" $D -vlasov_ranks 1,2
expect_fail "did you mean -vlasov_elc_vt" $D -vlasov_elc_vth 1
# the size check counts every phase-space vector: 5 per species (f, two RK stages, RHS, ghosted copy)
# and f_M for a colliding species: 20000 x 20000 cells x 8 DOF = 3.2e9 unknowns x 48 B = 143 GiB
# with LBO, x 40 B = 119 GiB without (past the index limit either way: no allocation, any machine)
expect_fail "3.2e+09 phase-space unknowns per species: more than this build's index limit 2147483647 (PETSc 32-bit indices), and 143 GiB" $DECKS/lbo_relax_1x1v.yaml -vlasov_cells 20000,20000
expect_fail "3.2e+09 phase-space unknowns per species: more than this build's index limit 2147483647 (PETSc 32-bit indices), and 119 GiB" $DECKS/lbo_relax_1x1v.yaml -vlasov_cells 20000,20000 -vlasov_collisions none
# split dimensions: unknown, not in this phase space, repeated, too many; ranks the split cannot hold
T=$DECKS/lbo_tophat_1x3v.yaml
expect_fail "'vw' is not a phase dimension of this 1x3v run" $T -vlasov_split_dims x,vw,vy -sim_output bad_s1
expect_fail "'y' is not a phase dimension of this 1x3v run" $T -vlasov_split_dims y,vx,vy -sim_output bad_s2
expect_fail "names phase dimension vx twice" $T -vlasov_split_dims vx,vx,vy -sim_output bad_s3
expect_fail "splits exactly 3 phase dimensions" $T -vlasov_split_dims x,vx,vy,vz -sim_output bad_s4
SURGE="$MPIEXEC $SURGE" expect_fail "2 ranks do not fit the split dimensions \[x, vx, vy\] (1 x 10 x 10 cells" $T -vlasov_split_dims x,vx,vy -vlasov_ranks 2,1,1 -sim_output bad_s5
for o in bad_s1 bad_s2 bad_s3 bad_s4 bad_s5; do
  [ ! -e $o.h5 ] && [ ! -e $o.xmf ] && [ ! -e $o.chk.h5 ] && [ ! -e $o.log ] || { echo "FAIL  a refused split wrote $o.*"; exit 1; }
done
echo "ok    refused split_dims wrote no file"
# a deck with a misspelled key
sed 's/^    vt: 1$/    vth: 1/' $D > typo.yaml
expect_fail "did you mean -vlasov_elc_vt" typo.yaml
# a restart file written by a different deck (here: another grid) is refused
$SURGE run $D -sim_max_steps 2 -sim_output a > a.log 2>&1 || { tail a.log; exit 1; }
expect_fail "vlasov_elc_cells_1" $D -vlasov_cells 32,48 -restart a.chk.h5 -sim_output b
# a truncated checkpoint is refused, and the output it would have continued is left alone
head -c 3000 a.chk.h5 > trunc.chk.h5
cp a.h5 a_before.h5
expect_fail "truncated or damaged" $D -restart trunc.chk.h5 -sim_output a
cmp a.h5 a_before.h5 || { echo "FAIL  a.h5 was modified by a refused restart"; exit 1; }
echo "ok    refused restart left a.h5 untouched"
# Vlasov-Maxwell (field: maxwell): one error line, before any file is written
W=$DECKS/weibel.yaml
expect_fail "is not one of: poisson, none, maxwell" $W -vlasov_field maxwel -sim_output bad_field
expect_fail "the speed of light must be a positive number" $W -vlasov_c 0 -sim_output bad_c
expect_fail "the speed of light must be a positive number" $W -vlasov_c -1 -sim_output bad_c
expect_fail "No generated Vlasov-Maxwell kernels for 2x2v tensor p=2" $DECKS/landau2d.yaml -vlasov_field maxwell -vlasov_basis tensor -sim_output bad_k
expect_fail "is not one of: central, upwind" $W -vlasov_maxwell_flux roe -sim_output bad_f
expect_fail "needs cdim 1 and uncharged species" $W -vlasov_exact planewave -sim_output bad_e
# 3x3v: no Poisson solve (so no initial charge perturbation) and a grid that cannot fit
X3="$W -vlasov_cdim 3 -vlasov_vdim 3 -vlasov_fit none -vlasov_order 1 -vlasov_cells 4,2,2,10,10,10 -vlasov_lower 0,0,0,-1,-1,-1 -vlasov_upper 15.707963267948966,1,1,1,1,1 -vlasov_maxwell_k 0.4,0,0 -vlasov_elc_drift 0,0.3,0"
expect_fail "vlasov_cdim 3 has no Poisson solver" $X3 -vlasov_field poisson -sim_output bad_3p
expect_fail "species elc needs perturbation: 0" $X3 -vlasov_elc_perturbation 1e-3 -vlasov_elc_k 0.4,0,0 -sim_output bad_3k
expect_fail "vlasov_cdim 3 runs without BGK collisions" $X3 -vlasov_collisions bgk -vlasov_elc_nu 0.1 -sim_output bad_3b
expect_fail "vlasov_cells" $X3 -vlasov_cells 4000,2000,2000,100,100,100 -sim_output bad_3m
for o in bad_field bad_c bad_k bad_f bad_e bad_3p bad_3k bad_3m; do
  [ ! -e $o.h5 ] && [ ! -e $o.xmf ] && [ ! -e $o.chk.h5 ] || { echo "FAIL  a refused deck wrote $o.*"; exit 1; }
done
[ "$(grep -c 'surge: error:' out.log)" = 1 ] || { echo "FAIL  not exactly one error line"; cat out.log; exit 1; }
echo "ok    refused Vlasov-Maxwell decks wrote no file"
# BGK collisions
expect_fail "a collision frequency must be >= 0" $DECKS/bgk_relax.yaml -vlasov_elc_nu -1 -sim_output bad_nu
expect_fail "is not one of: none, bgk, lbo" $DECKS/bgk_relax.yaml -vlasov_collisions fp -sim_output bad_coll
expect_fail "a collision frequency must be >= 0" $DECKS/lbo_relax.yaml -vlasov_elc_nu -0.5 -sim_output bad_lnu
expect_fail "a collision frequency must be >= 0" $DECKS/lbo_tophat_1x3v.yaml -vlasov_elc_nu -1 -sim_output bad_l3v
# collisions with field: maxwell (collisional Landau): the collisional root exists for one
# non-drifting Maxwellian in 1x1v; a collisionless checkpoint is not continued by a collisional deck
# (LBO in 2x2v and in 1x3v + Maxwell, refused before issue 39's folded-dimension work, now run:
# tests/regression/vlasov/lbo_3v.sh)
expect_fail "collisional root of one non-drifting Maxwellian" $DECKS/landau_lbo.yaml -vlasov_elc_drift 0.5 -sim_output bad_cd
$SURGE run $D -vlasov_field maxwell -vlasov_c 10 -vlasov_cells 16,32 -vlasov_fit none -sim_max_steps 2 -sim_output nocoll > nocoll.log 2>&1 || { tail nocoll.log; exit 1; }
expect_fail "does not record 'vlasov_collisions'" $DECKS/landau_lbo.yaml -restart nocoll.chk.h5 -sim_output bad_rc
# top-hat: it must lie inside the velocity box; a fit has no Maxwellian root for it
expect_fail "does not hold its top-hat" $DECKS/lbo_tophat_1x1v.yaml -vlasov_elc_tophat_width 7 -sim_output bad_th
expect_fail "is a top-hat (init tophat): set fit: none" $DECKS/lbo_tophat_1x1v.yaml -vlasov_field poisson -vlasov_fit landau -vlasov_elc_k 0.6283185307179586 -vlasov_elc_perturbation 1e-3 -sim_output bad_thf
for o in bad_nu bad_coll bad_lnu bad_l3v bad_cd bad_rc bad_th bad_thf; do [ ! -e $o.h5 ] && [ ! -e $o.chk.h5 ] || { echo "FAIL  a refused deck wrote $o.*"; exit 1; }; done
echo "ok    refused collision decks wrote no file"
