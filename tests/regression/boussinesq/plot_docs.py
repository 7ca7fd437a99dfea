#!/usr/bin/python3
"""Regenerate the figures and numbers of docs/boussinesq.md (not part of make check; ~5 minutes).

Usage: /usr/bin/python3 tests/regression/boussinesq/plot_docs.py   (after make)
1. growth rate of the critical mode vs Ra around onset, free-slip and no-slip (onset.yaml);
2. Blankenbach et al. (1989) cases 1a, 1b (Ra = 1e4, 1e5, Pr = 1e4 for infinity);
3. Pr = 1, no-slip: Ra = 1e4 and 1e5 (2 x 1, steady), Ra = 1e6 (4 x 1, 256 x 64, t = 150, time means
   over t >= 50 of the five Nusselt estimates);
writes docs/boussinesq_onset.png, docs/boussinesq_nu.png, docs/boussinesq_b.png and prints a summary."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.environ.get("SURGE", os.path.join(ROOT, "bin", "surge"))
DECKS = os.path.join(ROOT, "inputs", "boussinesq")
WORK = os.path.join(ROOT, "build", "docs-boussinesq")
DOCS = os.path.join(ROOT, "docs")
os.makedirs(WORK, exist_ok=True)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
NUS = ["nu_bottom", "nu_top", "nu_volume", "nu_eps_viscous", "nu_eps_thermal"]


def run(deck, out, *args):
    p = subprocess.run([SURGE, "run", os.path.join(DECKS, deck), "-sim_output", out] + list(args), cwd=WORK, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit(p.stdout[-3000:])
    with h5py.File(os.path.join(WORK, out + ".h5"), "r") as f:
        return {k: f["diagnostics"][k][()] for k in f["diagnostics"]}


def growth(d, t0=60.0):
    s = d["time"] >= t0
    return np.polyfit(d["time"][s], np.log(d["b_mode1"][s]), 1)[0]


# 1. onset
fig, axs = plt.subplots(1, 2, figsize=(10, 3.8))
for ax, (walls, rac, k) in zip(axs, [("freeslip", 27 * math.pi**4 / 4, math.pi / math.sqrt(2)), ("noslip", 1707.762, 3.117)]):
    ras = rac * np.array([0.9, 0.95, 0.98, 1.02, 1.05, 1.1])
    rates = [growth(run("onset.yaml", f"on_{walls}_{i}", "-boussinesq_walls", walls, "-boussinesq_rayleigh", repr(r),
                        "-boussinesq_length", f"{2 * math.pi / k!r},1")) for i, r in enumerate(ras)]
    i = 2
    ra0 = ras[i] - rates[i] * (ras[i + 1] - ras[i]) / (rates[i + 1] - rates[i])
    print(f"onset {walls}: rates {['%.4e' % r for r in rates]} -> Ra_c = {ra0:.3f} (theory {rac:.3f}, {100 * (ra0 / rac - 1):+.4f}%)")
    ax.plot(ras, rates, "o-", label="measured growth rate of |b_1|")
    if walls == "freeslip":
        q2 = k * k + math.pi**2
        rr = np.linspace(ras[0], ras[-1], 100)
        ax.plot(rr, k / math.sqrt(q2) - q2 / np.sqrt(rr), "k--", lw=1, label="exact (Pr = 1)")
    ax.axhline(0, color="gray", lw=0.5)
    ax.axvline(rac, color="r", lw=0.8, ls=":", label=f"theory Ra_c = {rac:.2f}")
    ax.set_title(f"{walls}: sign change at Ra = {ra0:.2f}")
    ax.set_xlabel("Ra")
    ax.set_ylabel("growth rate (1 / free-fall time)")
    ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "boussinesq_onset.png"), dpi=110)

# 2. Blankenbach
# case 1c (Ra = 1e6) needs ~0.1 thermal times = 1e4 free-fall times at Pr = 1e4: left out for cost
ref = {1e4: (4.884409, 42.864947), 1e5: (10.534095, 193.21454)}
grids = {1e4: ("32,25", "8000"), 1e5: ("64,33", "4000"), 1e6: ("128,49", "4000")}
for ra, (nu_ref, v_ref) in ref.items():
    d = run("blankenbach.yaml", f"bb_{ra:g}", "-boussinesq_rayleigh", repr(ra), "-boussinesq_cells", grids[ra][0], "-sim_t_end", grids[ra][1])
    kappa = 1 / math.sqrt(ra * 1e4)
    vrms = math.sqrt(2 * d["kinetic_energy"][-1]) / kappa
    print(f"Blankenbach Ra={ra:g} ({grids[ra][0]}): " + ", ".join(f"{k} {d[k][-1]:.6f}" for k in NUS) + f"; ref {nu_ref}; v_rms {vrms:.4f} (ref {v_ref}); rel. Nu err {d['nu_bottom'][-1] / nu_ref - 1:+.2e}")

# 3. Pr = 1
for ra, cells in [(1e4, "32,25"), (1e5, "64,33")]:
    d = run("rb_ra1e4.yaml", f"pr1_{ra:g}", "-boussinesq_rayleigh", repr(ra), "-boussinesq_cells", cells, "-sim_t_end", "300", "-boussinesq_max_dt", "0.05")
    print(f"Pr=1 no-slip 2x1 Ra={ra:g} ({cells}): " + ", ".join(f"{k} {d[k][-1]:.6f}" for k in NUS))
d = run("rb_ra1e4.yaml", "pr1_1e6", "-boussinesq_rayleigh", "1e6", "-boussinesq_length", "4,1", "-boussinesq_cells", "256,64",
        "-sim_t_end", "150", "-boussinesq_max_dt", "0.05", "-sim_diag_every", "5", "-sim_field_every", "2000")
s = d["time"] >= 50
means = {k: d[k][s].mean() for k in NUS}
print("Pr=1 no-slip 4x1 Ra=1e6 (256x64) time means t>=50: " + ", ".join(f"{k} {v:.4f}" for k, v in means.items())
      + f"; max rel. spread {max(abs(v / means['nu_volume'] - 1) for v in means.values()):.2e}")
fig, ax = plt.subplots(figsize=(9, 3.6))
for k in NUS:
    ax.plot(d["time"], d[k], lw=0.8, label=k)
ax.set_xlabel("t (free-fall times)")
ax.set_ylabel("Nu")
ax.set_ylim(0, 30)
ax.set_title("Ra = 1e6, Pr = 1, 4 x 1, no-slip, 256 x 64: five Nusselt estimates (means over t >= 50: %.3f .. %.3f)" % (min(means.values()), max(means.values())), fontsize=9)
ax.legend(fontsize=7, ncol=5)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "boussinesq_nu.png"), dpi=110)
with h5py.File(os.path.join(WORK, "pr1_1e6.h5"), "r") as f:
    g = f["fields/b"]
    kk = max(int(x) for x in g)
    b = g[str(kk)][()]
    t = g[str(kk)].attrs.get("time", float("nan"))
fig, ax = plt.subplots(figsize=(9, 2.6))
im = ax.imshow(b, origin="lower", extent=[0, 4, 0, 1], cmap="RdBu_r", vmin=-0.5, vmax=0.5, aspect="equal")
fig.colorbar(im, ax=ax, label="b")
ax.set_title(f"b at t = {float(np.squeeze(t)):.1f}, Ra = 1e6, Pr = 1 (fields written on 256 x 64 uniform cells)", fontsize=9)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "boussinesq_b.png"), dpi=110)
