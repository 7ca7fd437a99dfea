#!/usr/bin/env bash
# Same trajectory as LAMMPS: both codes read one LAMMPS data file (positions AND velocities) and
# run NVE with velocity Verlet (and NVT with the Nose-Hoover chain); the thermo values (T, PE, E, P) every 100 steps must agree to
# 1e-7 relative (both integrate the same equations in double precision; differences are
# summation-order round-off, amplified by the chaotic dynamics: measured ~1e-10).
#  - metal units: 500 perturbed fcc argon atoms, 150 K, LJ eps 0.0104 eV sigma 3.4 A rc 8.5 A,
#    dt 2 fs, 500 steps (checks ftm2v, mvv2e, kB, nktv2p in the dynamics, not only at step 0);
#  - lj units: 864 perturbed fcc atoms at rho* 0.8442, T* 1.0, rc 2.5, dt 0.005, 200 steps;
#  - the Nose-Hoover chain against LAMMPS's fix nvt (chain 3, Tdamp 0.5, target 1.5, 300 steps):
#    same chain masses (Q1 = dof kT tau^2) and the same Trotter splitting, so the same trajectory;
#  - NVE + Berendsen barostat against fix nve + fix press/berendsen iso (P* 1, pdamp 0.5, modulus
#    10, 300 steps): also the volume (LAMMPS dilates about the cell centre, surge about its origin:
#    the same system up to a translation).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
command -v lmp >/dev/null || { echo "FAIL: this test compares with LAMMPS, and lmp is not installed: run ./configure --install-deps (Debian package lammps)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
/usr/bin/python3 - <<'PY'
import numpy as np
def write(name, a, n, m, kB, mvv2e, T, seed, jitter):
    rng = np.random.default_rng(seed)
    b = np.array([(0, 0, 0), (.5, .5, 0), (.5, 0, .5), (0, .5, .5)])
    X = np.array([((i + u) * a, (j + v) * a, (k + w) * a) for k in range(n) for j in range(n) for i in range(n) for (u, v, w) in b])
    X += rng.normal(0, jitter, X.shape)
    V = rng.normal(0, np.sqrt(kB * T / (m * mvv2e)), X.shape); V -= V.mean(0)
    with open(name, "w") as f:
        f.write("test\n\n%d atoms\n1 atom types\n\n0 %.17g xlo xhi\n0 %.17g ylo yhi\n0 %.17g zlo zhi\n\nMasses\n\n1 %.17g\n\nAtoms # atomic\n\n" % (len(X), n * a, n * a, n * a, m))
        for i, x in enumerate(X): f.write("%d 1 %.17g %.17g %.17g\n" % (i + 1, *x))
        f.write("\nVelocities\n\n")
        for i, v in enumerate(V): f.write("%d %.17g %.17g %.17g\n" % (i + 1, *v))
write("ar.data", 5.26, 5, 39.948, 8.617343e-5, 1.0364269e-4, 150.0, 5, 0.05)
write("lj.data", (4 / 0.8442) ** (1 / 3), 6, 1.0, 1.0, 1.0, 1.0, 6, 0.02)
PY
compare() {
  /usr/bin/python3 - "$@" <<'PY'
import sys
def rows(f, surge):
    out = {}
    for l in open(f):
        w = l.split()
        if surge:
            if l.startswith("md thermo:") and w[2] != "Step": out[int(w[2])] = [float(w[k]) for k in (3, 4, 6, 7, 9)]
        elif len(w) >= 5 and w[0].isdigit() and all(c in "0123456789.-+e" for c in "".join(w)): out[int(w[0])] = [float(x) for x in w[1:]]
    return out
a, b = rows(sys.argv[1], False), rows(sys.argv[2], True)
assert sorted(a) == sorted(b) and len(a) >= 3, (sorted(a), sorted(b))
worst = max(abs(x - y) / max(abs(x), 1e-300) for s in a for x, y in zip(a[s], b[s]))
what = "T, PE, E, P" + (", V" if len(a[0]) == 5 else "")
print(f"{sys.argv[3]}: steps {sorted(a)}: max relative difference in {what} = {worst:.2e} (tolerance 1e-7)")
sys.exit(0 if worst < 1e-7 else 1)
PY
}
printf 'units metal\natom_style atomic\nread_data ar.data\npair_style lj/cut 8.5\npair_modify shift yes\npair_coeff 1 1 0.0104 3.4\nneighbor 2.0 bin\nneigh_modify every 1 delay 0 check yes\ntimestep 0.002\nfix 1 all nve\nthermo_style custom step temp pe etotal press\nthermo_modify norm no format float %%.15g\nthermo 100\nrun 500\n' > in.ar
lmp -in in.ar -log none > lmp_ar.out
"$SURGE" run "$root/inputs/md/ar_metal.yaml" -sim_output ar -md_lattice none -md_read_data ar.data -md_velocity_temperature 0 -sim_max_steps 500 -md_thermo_every 100 > s_ar.out
compare lmp_ar.out s_ar.out metal
printf 'units lj\natom_style atomic\nread_data lj.data\npair_style lj/cut 2.5\npair_modify shift yes\npair_coeff 1 1 1.0 1.0\nneighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\ntimestep 0.005\nfix 1 all nve\nthermo_style custom step temp pe etotal press\nthermo_modify norm yes format float %%.15g\nthermo 100\nrun 200\n' > in.lj
lmp -in in.lj -log none > lmp_lj.out
"$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output lj -md_lattice none -md_read_data lj.data -md_velocity_temperature 0 -sim_max_steps 200 -md_thermo_every 100 > s_lj.out
compare lmp_lj.out s_lj.out lj
printf 'units lj\natom_style atomic\nread_data lj.data\npair_style lj/cut 2.5\npair_modify shift yes\npair_coeff 1 1 1.0 1.0\nneighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\ntimestep 0.005\nfix 1 all nvt temp 1.5 1.5 0.5\nthermo_style custom step temp pe etotal press\nthermo_modify norm yes format float %%.15g\nthermo 100\nrun 300\n' > in.nvt
lmp -in in.nvt -log none > lmp_nvt.out
"$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output nvt -md_lattice none -md_read_data lj.data -md_velocity_temperature 0 -sim_max_steps 300 -md_thermo_every 100 \
  -md_ensemble nhc -md_temperature 1.5 -md_damp 0.5 > s_nvt.out
compare lmp_nvt.out s_nvt.out "lj nhc vs fix nvt"
printf 'units lj\natom_style atomic\nread_data lj.data\npair_style lj/cut 2.5\npair_modify shift yes\npair_coeff 1 1 1.0 1.0\nneighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\ntimestep 0.005\nfix 1 all nve\nfix 2 all press/berendsen iso 1.0 1.0 0.5 modulus 10.0\nthermo_style custom step temp pe etotal press vol\nthermo_modify norm yes format float %%.15g\nthermo 100\nrun 300\n' > in.npb
lmp -in in.npb -log none > lmp_npb.out
"$SURGE" run "$root/inputs/md/lj_nve.yaml" -sim_output npb -md_lattice none -md_read_data lj.data -md_velocity_temperature 0 -sim_max_steps 300 -md_thermo_every 100 \
  -md_barostat berendsen -md_pressure 1.0 -md_pdamp 0.5 -md_modulus 10 > s_npb.out
compare lmp_npb.out s_npb.out "lj NVE + Berendsen vs fix press/berendsen"
