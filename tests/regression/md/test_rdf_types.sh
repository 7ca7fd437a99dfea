#!/usr/bin/env bash
# g_ab(r) between atom types (md_rdf_types) against an independent evaluation: a two-type LJ liquid
# (40 A + 88 B atoms, 10 A box) samples g(r) every 5 steps and writes its trajectory at the same steps;
# numpy recomputes g_AB, g_AA and g_BB from the H5MD frames with minimum images and the normalisation
# of LAMMPS's compute rdf (N_a (N_b - delta_ab) / V). Same samples, so they agree to the 8 printed
# digits (tolerance 1e-6 absolute); on 2 ranks too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$root/build/tests/test_deepmd_train" data . > /dev/null
"$root/build/tests/test_deepmd_tool" xyz pair_valid.h5 0 2 pair.xyz
cat > mix.yaml <<'DECK'
sim: {solver: md, max_steps: 40}
md: {units: metal, read_xyz: pair.xyz, mass: [16, 4], velocity_temperature: 300, seed: 4242, dt: 0.0005,
     forces: lj, lj_epsilon: [0.2, 0.1], lj_sigma: [1.6, 1.2], lj_cutoff: 3.5, skin: 0.5, thermo_every: 0}
DECK
for pair in A,B A,A B,B; do
  for np in 1 2; do
    mpiexec -n $np --oversubscribe "$SURGE" run mix.yaml -sim_output r$np \
      -md_rdf_every 5 -md_rdf_start 5 -md_rdf_bins 35 -md_rdf_types $pair -md_rdf_file g_${pair/,/}_$np.txt \
      -md_traj_file t_${pair/,/}_$np.h5md -md_traj_every 5 > run.log 2>&1 || { cat run.log; exit 1; }
  done
done
/usr/bin/python3 - <<'PY'
import h5py, numpy as np, sys
bad = 0
for pair in ("AB", "AA", "BB"):
    for np_ in (1, 2):
        f = h5py.File(f"t_{pair}_{np_}.h5md", "r")
        names = f["parameters"].attrs["species_names"]
        names = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
        sp = f["particles/all/species"][:]
        a, b = names.index(pair[0]), names.index(pair[1])
        steps = f["particles/all/position/step"][:]
        X = f["particles/all/position/value"][:]
        L = f["particles/all/box/edges/value"][0]
        V = abs(np.linalg.det(L)); Ld = np.diag(L)
        rc, nb = 3.5, 35
        hist = np.zeros(nb); ns = 0
        for k in np.nonzero(steps >= 5)[0]:
            xi, xj = X[k][sp == a], X[k][sp == b]
            d = xi[:, None, :] - xj[None, :, :]
            d -= Ld * np.round(d / Ld)
            r = np.sqrt((d ** 2).sum(-1))
            if a == b: r = r[~np.eye(len(xi), dtype=bool)]
            hist += np.histogram(r[r < rc], bins=nb, range=(0, rc))[0]; ns += 1
        na, nbb = (sp == a).sum(), (sp == b).sum() - (a == b)
        r0 = np.arange(nb) * rc / nb; r1 = r0 + rc / nb
        g = hist / (ns * na * nbb / V * 4 / 3 * np.pi * (r1 ** 3 - r0 ** 3))
        s = np.loadtxt(f"g_{pair}_{np_}.txt")[:, 1]
        err = np.max(np.abs(g - s))
        ok = err < 1e-6 and g.max() > 0.5
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'}  g_{pair}(r), {np_} rank(s), {ns} samples: max |surge - numpy| = {err:.1e} (peak {g.max():.3f})")
sys.exit(1 if bad else 0)
PY
