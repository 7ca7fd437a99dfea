#!/usr/bin/env bash
# H5MD trajectory layout and contents (2 ranks, collective parallel HDF5 writes): /h5md version
# [1,1], box dimension 3 / periodic boundaries, step = [0,10,20] and time = step*dt for every
# element, value shapes [3][N][3], species and mass [N]; unwrapped positions (x + image . box) move
# continuously between frames (|dx| < 0.5 sigma over 10 steps, while wrapped ones jump by a box
# length for atoms that crossed), and forces sum to zero (Newton's third law, |sum f| < 1e-9).
# Observables (what an md_frames sample needs): /observables/potential_energy value[3] equals N x
# the per-atom pe diagnostic of the same steps, and /observables/virial value[3][9] gives the
# recorded pressure through P = (dof kB T + tr W) / (3 V) (both to 1e-12 relative: the same numbers
# reach both files); the virial is symmetric (pair forces along r_ij, to 1e-12).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
MPIEXEC=${MPIEXEC:-mpiexec -n 2 --oversubscribe}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
$MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output t -md_lattice_cells 5,5,5 -sim_max_steps 20 -md_traj_file t.h5md -md_traj_every 10 -md_velocity_temperature 3.0 > run.log
for q in position velocity force image box/edges; do
  h5dump -d /particles/all/$q/value -b LE -o $(echo $q | tr / _).bin t.h5md > /dev/null
  h5dump -d /particles/all/$q/step -b LE -o $(echo $q | tr / _).step t.h5md > /dev/null
  h5dump -d /particles/all/$q/time -b LE -o $(echo $q | tr / _).time t.h5md > /dev/null
done
h5dump -d /particles/all/species -b LE -o species.bin t.h5md > /dev/null
h5dump -a /h5md/version t.h5md | grep -q "1, 1" || { echo "FAIL: /h5md version"; exit 1; }
h5dump -a /particles/all/box/dimension t.h5md | grep -q "(0): 3" || { echo "FAIL: box dimension"; exit 1; }
h5dump -a /particles/all/box/boundary t.h5md | grep -q '"periodic", "periodic", "periodic"' || { echo "FAIL: box boundary"; exit 1; }
/usr/bin/python3 - <<'PY'
import numpy as np
N = 500
for q in ["position", "velocity", "force", "image", "box_edges"]:
    st = np.fromfile(q + ".step", "<i8"); tm = np.fromfile(q + ".time", "<f8")
    assert list(st) == [0, 10, 20], (q, st)
    assert np.allclose(tm, st * 0.005, rtol=0, atol=1e-12), (q, tm)
x = np.fromfile("position.bin", "<f8").reshape(3, N, 3)
f = np.fromfile("force.bin", "<f8").reshape(3, N, 3)
img = np.fromfile("image.bin", "<i4").reshape(3, N, 3)
H = np.fromfile("box_edges.bin", "<f8").reshape(3, 3, 3)
sp = np.fromfile("species.bin", "<i4")
assert sp.shape == (N,) and (sp == 0).all()
xu = x + np.einsum("fnd,fde->fne", img, H)
du = np.abs(np.diff(xu, axis=0)).max()
dw = np.abs(np.diff(x, axis=0)).max()
crossed = int((np.abs(np.diff(img, axis=0)).sum(axis=(0, 2)) > 0).sum())
fs = np.abs(f.sum(axis=1)).max()
print(f"h5md: 3 frames x {N} atoms; unwrapped max |dx| per 10 steps {du:.3f} sigma (wrapped {dw:.2f}); {crossed} atoms crossed the cell; max |sum f| = {fs:.1e}")
assert du < 0.5 and crossed > 0 and dw > 5, "image counters inconsistent"
assert fs < 1e-9, "forces do not sum to zero"
import h5py
with h5py.File("t.h5md", "r") as f:
    for q in ["potential_energy", "virial"]:
        assert list(f[f"observables/{q}/step"][()]) == [0, 10, 20], q
    pe = f["observables/potential_energy/value"][()]
    W = f["observables/virial/value"][()].reshape(3, 3, 3)
with h5py.File("t.h5", "r") as f:
    g = f["diagnostics"]
    st = list(g["step"][()]); k = [st.index(s) for s in (0, 10, 20)]
    pd, T, P, V = (g[q][()][k] for q in ("pe", "temperature", "pressure", "volume"))
e1 = np.abs(pe / N - pd).max() / np.abs(pd).max()
P2 = ((3 * N - 3) * T + np.trace(W, axis1=1, axis2=2)) / (3 * V)
e2 = np.abs(P2 - P).max() / np.abs(P).max()
e3 = np.abs(W - W.transpose(0, 2, 1)).max() / np.abs(W).max()
print(f"h5md observables: potential energy vs diagnostics {e1:.1e}, pressure from virial {e2:.1e}, virial asymmetry {e3:.1e}")
assert e1 < 1e-12 and e2 < 1e-12 and e3 < 1e-12, "observables inconsistent with the diagnostics"
PY
# The trajectory of a run that commits at every checkpoint (-sim_checkpoint_every 2: 10 commits, each
# after the first continuing the previous commit's file with only the interval's frames,
# io/h5md/h5md_catchup.c) holds exactly the frames and values of the run that commits once (every
# dataset equal bit for bit, velocities and forces included), 2 ranks.
$MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output c -md_lattice_cells 5,5,5 -sim_max_steps 20 -md_traj_file c.h5md -md_traj_every 1 -md_traj_velocities -md_traj_forces -md_velocity_temperature 3.0 -sim_checkpoint_every 2 > run_c.log
$MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output o -md_lattice_cells 5,5,5 -sim_max_steps 20 -md_traj_file o.h5md -md_traj_every 1 -md_traj_velocities -md_traj_forces -md_velocity_temperature 3.0 > run_o.log
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
a, b = h5py.File("c.h5md", "r"), h5py.File("o.h5md", "r")
na, nb = [], []
a.visititems(lambda n, o: na.append(n) if isinstance(o, h5py.Dataset) else None)
b.visititems(lambda n, o: nb.append(n) if isinstance(o, h5py.Dataset) else None)
assert sorted(na) == sorted(nb), (na, nb)
bad = [n for n in na if a[n].shape != b[n].shape or not np.array_equal(a[n][()], b[n][()])]
steps = list(a["particles/all/position/step"][()])
print(f"h5md with a commit every 2 steps: {len(na)} datasets, {len(steps)} frames, equal to one commit: {not bad}")
assert steps == list(range(21)) and not bad, f"checkpointed trajectory differs: {bad}"
PY
ls | grep -q '\.old\.tmp\|\.tmp\.' && { echo "FAIL: temporaries left: $(ls | grep tmp)"; exit 1; }
# The catch-up's fallbacks (io/h5md/h5md.c MemberResume), each ending equal to o.h5md bit for bit.
# A trajectory commit's catch-up number k follows commit k+1 (the first commit has nothing to continue).
# same FILE FRAMES [RTOL]: FILE holds o.h5md's first FRAMES frames of every element, static data
# equal, bit for bit (RTOL: observables to RTOL relative, for a 1-rank FILE: o.h5md sums the energy
# and virial over 2 ranks, in another order).
same() {
  /usr/bin/python3 - "$1" "$2" "${3:-0}" <<'PY'
import h5py, numpy as np, sys
a, b, n, rtol = h5py.File(sys.argv[1], "r"), h5py.File("o.h5md", "r"), int(sys.argv[2]), float(sys.argv[3])
na, nb = [], []
a.visititems(lambda k, o: na.append(k) if isinstance(o, h5py.Dataset) else None)
b.visititems(lambda k, o: nb.append(k) if isinstance(o, h5py.Dataset) else None)
assert sorted(na) == sorted(nb), (na, nb)
timed = lambda k: k.rsplit("/", 1)[-1] in ("step", "time", "value")
eq = lambda k, x, y: x.shape == y.shape and (np.allclose(x, y, rtol=rtol, atol=0) if k.startswith("observables/") and k.endswith("value") else np.array_equal(x, y))
bad = [k for k in na if not eq(k, a[k][()], b[k][()][:n] if timed(k) else b[k][()])]
print(f"  {sys.argv[1]}: {len(na)} datasets, {a['particles/all/position/step'].shape[0]} frames, equal to one commit's first {n}: {not bad}")
assert not bad, f"{sys.argv[1]} differs from one commit: {bad}"
PY
}
notemps() { if ls | grep -q '\.old\.tmp\|\.tmp'; then echo "FAIL: $1: temporaries left: $(ls | grep tmp)"; exit 1; fi; }
cargs="-md_lattice_cells 5,5,5 -sim_max_steps 20 -md_traj_every 1 -md_traj_velocities -md_traj_forces -md_velocity_temperature 3.0 -sim_checkpoint_every 2"
# (a) Another process reads the committed file when commit 2 would keep it for the catch-up
# (SURGE_TEST_CATCHUP_READER=2 holds commit 2 until the reader has it): the file must not change under
# the reader, so the byte copy continues instead. HDF5's own file locking is off for the run (as on
# parallel file systems), so surge's check is all that keeps the catch-up off the reader's file.
/usr/bin/python3 - <<'PY' &
import fcntl, os, time
while not os.path.exists("r.h5md"): time.sleep(0.002)
fd = os.open("r.h5md", os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
read = lambda: os.pread(fd, os.fstat(fd).st_size, 0)
before = read()
for _ in range(6000):
    if os.path.exists("reader.stop"): break
    time.sleep(0.01)
open("reader.out", "w").write(f"{len(before)} {len(read())} {before == read()}\n")
PY
reader=$!
HDF5_USE_FILE_LOCKING=FALSE SURGE_TEST_CATCHUP_READER=2 $MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output r -md_traj_file r.h5md $cargs > run_r.log
touch reader.stop
wait $reader
read -r b0 b1 unchanged < reader.out
echo "  reader's file (commit 1): $b0 bytes when taken, $b1 at the end, unchanged: $unchanged"
[ "$unchanged" = True ] || { echo "FAIL: the catch-up appended to the file a reader held"; exit 1; }
same r.h5md 21
# (b) The catch-up after commit 3 fails halfway (SURGE_TEST_CATCHUP_FAIL=2): the older file is
# dropped and the committed one copied whole.
SURGE_TEST_CATCHUP_FAIL=2 $MPIEXEC "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output f -md_traj_file f.h5md $cargs > run_f.log
same f.h5md 21
# (c) The disk fills during the catch-up after commit 3 (SURGE_TEST_CATCHUP_ENOSPC=2; the byte copy
# after it fails too): one disk-full line (as the file_safety fuzzer judges: one "surge: error:" line,
# no PETSc traceback; mpiexec adds its own note on 2 ranks), exit 1, commit 3 (steps 0..6) whole, no
# temporaries, on 1 and 2 ranks.
for np_ in 1 2; do
  rm -f e.*
  launch="$MPIEXEC"
  [ $np_ = 1 ] && launch=
  set +e
  SURGE_TEST_CATCHUP_ENOSPC=2 $launch "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output e -md_traj_file e.h5md $cargs > run_e.log 2> run_e.err
  rc=$?
  set -e
  nerr=$(grep -c '^surge: error:' run_e.err || true)
  echo "  disk full in the catch-up, $np_ rank(s): exit $rc, $(grep '^surge: error:' run_e.err | head -c 300)"
  [ "$rc" = 1 ] && [ "$nerr" = 1 ] && ! grep -q 'PETSC ERROR' run_e.err run_e.log && grep -q '^surge: error: .*disk full' run_e.err || { echo "FAIL: disk full in the catch-up ($np_ ranks): not one clean disk-full line and exit 1"; cat run_e.err; exit 1; }
  same e.h5md 7 $([ $np_ = 1 ] && echo 1e-12)
  /usr/bin/python3 -c "import h5py; s = list(h5py.File('e.h5', 'r')['diagnostics/step'][()]); assert s == [0], s; h5py.File('e.chk.h5', 'r').close(); print('  e.h5 diagnostics (every 10 steps) at steps', s, '; e.chk.h5 readable')"
  notemps "disk full in the catch-up ($np_ ranks)"
done
notemps "catch-up fallbacks"
# A run killed inside its second commit (SURGE_TEST_KILL_COMMIT=4: after the first rename of that
# commit; the set is k.h5, k.h5md, k.chk.h5) leaves k.h5md.old.tmp, kept for the catch-up. The next
# run on k, naming no trajectory, recovers the set from the commit's journal (k.h5.set.tmp): k.h5md is
# commit 1's again (steps 0..2) and its .old.tmp goes too (io/h5/writeset.c RecoverJournal).
set +e
SURGE_TEST_KILL_COMMIT=4 "$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output k -md_traj_file k.h5md $cargs > run_k.log 2>&1
set -e
[ -e k.h5md.old.tmp ] && [ -e k.h5.set.tmp ] || { echo "FAIL: the killed commit left no k.h5md.old.tmp / journal: $(ls k.*)"; exit 1; }
"$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output k -md_lattice_cells 5,5,5 -sim_max_steps 2 -md_velocity_temperature 3.0 > run_k2.log 2>&1 || { echo "FAIL: the run after a killed commit fails"; tail -3 run_k2.log; exit 1; }
same k.h5md 3 1e-12
notemps "after a killed commit"
echo "h5md: PASS"
