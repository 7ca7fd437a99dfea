#!/usr/bin/env bash
# Regenerates the figures of docs/md.md: docs/md_rdf.png (g(r) of surge vs LAMMPS) and
# docs/md_energy.png (NVE energy error at two time steps, the dt^2 collapse).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
SURGE=${SURGE:-$root/bin/surge}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$SURGE" run "$root/inputs/md/lj_rdf.yaml" -sim_output rdf -md_rdf_file rdf.txt -md_thermo_every 1000 > /dev/null
"$SURGE" run "$root/inputs/md/lj_drift.yaml" -sim_output a -md_dt 0.005 -sim_max_steps 400 -md_thermo_every 2 > e1.log
"$SURGE" run "$root/inputs/md/lj_drift.yaml" -sim_output b -md_dt 0.0025 -sim_max_steps 800 -md_thermo_every 4 > e2.log
/usr/bin/python3 - "$root" <<'PY'
import sys, numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
root = sys.argv[1]
ours = np.loadtxt("rdf.txt"); ref = np.loadtxt(f"{root}/tests/regression/md/ref/lj_rdf_lammps.txt")
fig, ax = plt.subplots(2, 1, figsize=(6.4, 5.6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
ax[0].plot(ref[:, 0], ref[:, 1], "k-", lw=2, label="LAMMPS 29Sep2021 (lmp)")
ax[0].plot(ours[:, 0], ours[:, 1], "r--", lw=1.5, label="surge md")
ax[0].set_ylabel("g(r)"); ax[0].legend(); ax[0].set_title(r"LJ liquid $\rho^*=0.8442$, $T^*=1.0$, 2048 atoms, 200 samples")
ax[1].plot(ours[:, 0], ours[:, 1] - ref[:, 1], "b-"); ax[1].axhline(0, color="k", lw=0.5)
ax[1].set_ylabel(r"$\Delta g$"); ax[1].set_xlabel(r"r / $\sigma$"); ax[1].set_ylim(-0.05, 0.05)
fig.tight_layout(); fig.savefig(f"{root}/docs/md_rdf.png", dpi=110)
def load(f):
    r = [l.split() for l in open(f) if l.startswith("md thermo:") and l.split()[2] != "Step"]
    return np.array([float(x[2]) for x in r]), np.array([float(x[6]) for x in r])
s1, e1 = load("e1.log"); s2, e2 = load("e2.log")
fig, ax = plt.subplots(figsize=(6.4, 4))
ax.plot(s1 * 0.005, e1 - e1[0], label=r"$\delta t = 0.005\,\tau$")
ax.plot(s2 * 0.0025, 4 * (e2 - e2[0]), "--", label=r"$\delta t = 0.0025\,\tau$, error $\times 4$")
ax.set_xlabel(r"t / $\tau$"); ax.set_ylabel(r"$E(t) - E(0)$  [$\epsilon$/atom]")
ax.set_title("NVE velocity Verlet, LJ liquid (864 atoms): error scales as $\\delta t^2$")
ax.legend(); fig.tight_layout(); fig.savefig(f"{root}/docs/md_energy.png", dpi=110)
print("max|dE|", abs(e1 - e1[0]).max(), abs(e2 - e2[0]).max())
PY
