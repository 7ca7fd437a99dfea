#!/usr/bin/env bash
# Bad-input catalogue (issue 15): each case is a command that must be refused with exit 1, exactly
# one "surge: error:" line containing the expected fragment, no PETSc traceback, no MPI_ABORT, and
# every file written earlier (good outputs of vlasov, heat, dft and md runs with the same output
# bases, checkpoints, inputs) byte-identical before and after (sha256 of the whole folder).
# Deck-syntax cases live with the deck reader's tests (tests/fuzz); these are the command line,
# files, sizes, output paths, restarts and MPI. Usage: bad_input_catalogue.sh [-v]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
MPIEXEC=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
w=$root/tests/logs/work/core_bad_input_catalogue
rm -rf "$w"; mkdir -p "$w"; cd "$w" || exit 2
I=$root/inputs
V="$I/vlasov/landau.yaml -sim_t_end 0.5 -sim_output v"
H="$I/heat/decay2d.yaml -sim_output h"
D="$I/dft/water_csr.yaml -sim_output d -dft_ks_csr $I/dft/water32-KS.csr -dft_s_csr $I/dft/water32-S.csr"
M="$I/md/ar_metal.yaml -sim_max_steps 5 -sim_output m -md_traj_file m.h5md -md_traj_every 1"
# the earlier output every case must leave alone
$SURGE run $V > /dev/null && $SURGE run $H > /dev/null && $SURGE run $D > /dev/null && $SURGE run $M > /dev/null || { echo "setup runs failed"; exit 1; }
mkdir -p dirout.h5 dp/set.000
# a checkpoint older than its output: a later fresh run rewrote hs.h5 (and wrote its own checkpoint)
$SURGE run $I/heat/decay2d.yaml -sim_output hs -sim_max_steps 60 > /dev/null && mv hs.chk.h5 stale.chk.h5
$SURGE run $I/heat/decay2d.yaml -sim_output hs -sim_max_steps 10 > /dev/null || exit 1
cp -r "$root/tests/data/water_dft/data_0" npy
$SURGE dataset import set.h5 npy > /dev/null || exit 1
KS=$root/inputs/dft/water32-KS.csr
head -c 3000 /dev/urandom > garbage.bin
head -c 1000 "$KS" > trunc.csr
head -c 1234 "$KS" > cut.csr                                  # ends mid-line
{ head -3 "$KS"; echo "5 2 0.1"; } > lower.csr
{ head -3 "$KS"; echo "2 5 nan"; } > nan.csr
grep -v '^  ks_csr:' "$I/dft/water_csr.yaml" > noks.yaml    # the overlap without the Kohn-Sham matrix
head -c 2000 v.chk.h5 > trunc.chk.h5
echo 'sim: {solver: heat, t_end: 1}' > nosuch_solver.yaml
sed 's/lower: \[0.5, 0.2\]/lower: [-1, 0.2]/' "$I/heat/ensemble2d.yaml" > ens_bad.yaml
cp npy/set.000/coord.npy c.npy
mkdir -p badnpy1/set.000 badnpy2/set.000 badnpy3/set.000 badnpy4/set.000
for d in badnpy1 badnpy2 badnpy3 badnpy4; do cp npy/type*.raw $d/; cp npy/set.000/*.npy $d/set.000/; done
cp garbage.bin badnpy1/set.000/coord.npy
head -c 300 c.npy > badnpy2/set.000/coord.npy
sed 's/<f4/<c8/' c.npy > badnpy3/set.000/coord.npy
/usr/bin/python3 -c "
d=open('c.npy','rb').read(); i=d.index(b'shape'); open('badnpy4/set.000/coord.npy','wb').write(d[:i+9]+b'99999999999,99999999999,9'+d[i+34:])"
# a failing ensemble member is found after others ran: their member files (kept for resuming) are its own
snapshot() { find . -type f ! -name '*.log' ! -path './ens_bad_ensemble.members/*' -print0 | sort -z | xargs -0 sha256sum; }
before=$(snapshot)

pass=0 fail=0 n=0
# case RANKS FRAGMENT -- ARGS...   (run from $w; RANKS 1 or 2)
case_() {
  local ranks=$1 frag=$2; shift 3
  n=$((n + 1))
  local pre=""; [ "$ranks" = 2 ] && pre=$MPIEXEC
  (cd "$w" && timeout 120 $pre $SURGE "$@") > out.log 2> err.log
  local rc=$? nerr; nerr=$(grep -c "^surge: error:" err.log)
  local why=""
  [ $rc -eq 1 ] || why="exit $rc"
  [ "$nerr" -eq 1 ] || why="$why, $nerr error lines"
  grep -qF -- "$frag" err.log || why="$why, no '$frag'"
  grep -qE "PETSC ERROR|MPI_ABORT|HDF5-DIAG|runtime error|AddressSanitizer" err.log out.log && why="$why, traceback/abort/diag"
  [ "$(snapshot)" = "$before" ] || { why="$why, earlier files changed"; before=$(snapshot); }
  rm -rf nodir 2> /dev/null
  if [ -z "$why" ]; then pass=$((pass + 1)); [ "${1:-}" = -v ] && echo "ok   $n: $*"
  else fail=$((fail + 1)); echo "FAIL $n: surge $* ($ranks rank(s)):$why"; sed 's/^/    | /' err.log | head -5; fi
}
# --- vlasov: set-up refusals (item 1), sizes (item 5), tracebacks turned into lines (item 7)
case_ 1 "exceeds the solver's stable step" -- run $V -sim_dt 10
case_ 1 "outside [1e-100, 1e100]" -- run $V -vlasov_lower -1e308,-6
case_ 1 "outside [1e-100, 1e100]" -- run $V -vlasov_upper 1e308,6
case_ 1 "index limit" -- run $V -vlasov_cells 1000000,1000000
case_ 1 "needs a perturbed mode" -- run $V -vlasov_elc_k 0
case_ 1 "needs a perturbed mode" -- run $V -vlasov_elc_perturbation 0
case_ 1 "stability limit" -- run $V -vlasov_cfl 5
case_ 1 "vlasov_order" -- run $V -vlasov_order 7
case_ 1 "needs 2 entries" -- run $V -vlasov_cells 32
case_ 1 "is not above" -- run $V -vlasov_upper 0,6
case_ 1 "cannot resolve a Maxwellian" -- run $V -vlasov_elc_vt 0.05
case_ 1 "does not hold its Maxwellian" -- run $V -vlasov_elc_vt 3
case_ 1 "not a multiple of 2 pi / L" -- run $V -vlasov_elc_k 0.3
case_ 1 "fit_window" -- run $V -vlasov_fit_window 5,3
case_ 1 "basis" -- run $V -vlasov_basis foo
case_ 1 "did you mean" -- run $V -vlasov_cfll 0.5
case_ 1 "t_end" -- run $V -sim_t_end -1
# --- heat
case_ 1 "index limit" -- run $H -heat_cells 1000000,1000000
case_ 1 "heat_kappa" -- run $H -heat_kappa -1
case_ 1 "is not resolved" -- run $H -heat_mode 20,20
case_ 1 "heat_cfl" -- run $H -heat_cfl 2
case_ 1 "exceeds the solver's stable step" -- run $H -sim_dt 1
case_ 1 "max_steps" -- run $H -sim_max_steps -5
# --- output paths (item 6)
case_ 1 "directory 'nodir' does not exist" -- run $H -sim_output nodir/x
case_ 1 "is empty" -- run $I/heat/decay2d.yaml -sim_output ""
case_ 1 "'dirout.h5' is a directory" -- run $I/heat/decay2d.yaml -sim_output dirout
case_ 1 "names a directory" -- run $I/heat/decay2d.yaml -sim_output .
case_ 1 "names a directory" -- run $I/heat/decay2d.yaml -sim_output sub/
case_ 1 "cannot create files in directory '/proc'" -- run $I/heat/decay2d.yaml -sim_output /proc/x
case_ 1 "is not a directory" -- run $I/heat/decay2d.yaml -sim_output garbage.bin/x
# --- restarts
case_ 1 "does not exist" -- run $V -restart missing.chk.h5
case_ 1 "not an HDF5 file" -- run $V -restart garbage.bin
case_ 1 "trunc.chk.h5" -- run $V -restart trunc.chk.h5
case_ 1 "solver" -- run $V -restart h.chk.h5
case_ 1 "heat_cells_0" -- run $H -heat_cells 16,24 -restart h.chk.h5
case_ 1 "not a surge checkpoint" -- run $V -restart set.h5
case_ 1 "is the output of another run" -- run $I/heat/decay2d.yaml -sim_output hs -sim_max_steps 80 -restart stale.chk.h5
# --- dft: the CP2K matrices are read before any file is written (item 1)
case_ 1 "Cannot open CP2K CSR file" -- run $D -dft_ks_csr /nonexistent.csr
case_ 1 "expected 'row col value'" -- run $D -dft_ks_csr garbage.bin
case_ 1 "does not match" -- run $D -dft_ks_csr trunc.csr
case_ 1 "truncated" -- run $D -dft_s_csr cut.csr
case_ 1 "holds no entries" -- run $D -dft_ks_csr /dev/null
case_ 1 "has no mirror" -- run $D -dft_ks_csr lower.csr
case_ 1 "not a finite number" -- run $D -dft_ks_csr nan.csr
case_ 1 "not a multiple of dft block_size" -- run $D -dft_block_size 5
case_ 1 "s_csr is set but ks_csr is not" -- run noks.yaml -sim_output d -dft_s_csr $I/dft/water32-S.csr
# --- md (item 5)
case_ 1 "index limit" -- run $M -md_lattice_cells 10000,10000,10000
case_ 1 "md_lattice_constant" -- run $M -md_lattice_constant -1
case_ 1 "md_lattice" -- run $M -md_lattice foo
case_ 1 "exactly one start structure" -- run $M -md_read_xyz missing.xyz
case_ 1 "three counts" -- run $M -md_lattice_cells 2,2
case_ 1 "did you mean" -- run $M -md_temperatur 2                # after set-up: the trajectory m.h5md is kept
case_ 1 "directory 'nodir' does not exist" -- run $M -md_traj_file nodir/t.h5md
case_ 1 "'dirout.h5' is a directory" -- run $M -md_traj_file dirout.h5
# --- dataset files (item 7)
case_ 1 "not a .npy file" -- dataset import new.h5 badnpy1
case_ 1 "header promises" -- dataset import new.h5 badnpy2
case_ 1 "is not supported" -- dataset import new.h5 badnpy3
case_ 1 "too large to be real" -- dataset import new.h5 badnpy4
case_ 1 "missing" -- dataset import new.h5 missingdir
case_ 1 "missing.h5" -- dataset export missing.h5 outdir
case_ 1 "unknown verb" -- dataset frobnicate
case_ 1 "missing.h5" -- info missing.h5
case_ 1 "not an HDF5 file" -- info garbage.bin
case_ 1 "Cannot read deck" -- run missing.yaml
case_ 1 "nosuch" -- run nosuch_solver.yaml -sim_solver nosuch
# --- MPI: the same refusals on 2 ranks are one line and exit 1 on every rank
case_ 2 "exceeds the solver's stable step" -- run $V -sim_dt 10
case_ 2 "expected 'row col value'" -- run $D -dft_ks_csr garbage.bin
case_ 2 "Cannot open CP2K CSR file" -- run $D -dft_s_csr /nonexistent.csr
case_ 2 "directory 'nodir' does not exist" -- run $V -sim_output nodir/x
case_ 2 "index limit" -- run $H -heat_cells 1000000,1000000
case_ 2 "index limit" -- run $M -md_lattice_cells 10000,10000,10000
case_ 2 "not an HDF5 file" -- run $V -restart garbage.bin
case_ 1 "directory 'nodir' does not exist" -- ensemble $I/heat/ensemble2d.yaml -ensemble_output nodir/x
case_ 1 "directory 'nodir' does not exist" -- train $I/deepmd/pair.yaml -train_output nodir/model
case_ 1 "would overwrite set.h5, a surge dataset" -- train $I/deepmd/pair.yaml -train_output set
case_ 2 "would overwrite set.h5, a surge dataset" -- run $H -sim_output set
case_ 2 "ensemble member" -- ensemble ens_bad.yaml
# --- and inputs that must run (they used to crash): a dilute MD system (neighbour bins capped)
n=$((n + 1))
if $SURGE run $I/md/ar_metal.yaml -md_lattice_constant 1000000 -sim_max_steps 2 -sim_output dilute > dilute.log 2>&1; then pass=$((pass + 1))
else fail=$((fail + 1)); echo "FAIL $n: md_lattice_constant 1000000 did not run"; tail -5 dilute.log; fi
echo "bad-input catalogue: $n cases, $pass passed, $fail failed"
[ $fail -eq 0 ]
