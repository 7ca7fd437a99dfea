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
echo "h5md: PASS"
