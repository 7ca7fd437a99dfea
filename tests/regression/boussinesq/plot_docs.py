#!/usr/bin/python3
"""Regenerate the figures and numbers of docs/boussinesq.md (not part of make check; ~5 minutes).

Usage: /usr/bin/python3 tests/regression/boussinesq/plot_docs.py   (after make)
1. growth rate of the critical mode vs Ra around onset, free-slip and no-slip (onset.yaml);
2. Blankenbach et al. (1989) cases 1a, 1b (Ra = 1e4, 1e5, Pr = 1e4 for infinity);
3. Pr = 1, no-slip, 2 x 1: steady rolls at Ra = 1e4 and 1e5, and the Newton reference (steady_rolls.py)
   on three grids each;
4. resolution convergence of the steady Ra = 1e4 rolls in z and x (the runs of resolution_test.py);
writes docs/boussinesq_onset.png, docs/boussinesq_resolution.png and prints a summary. The Ra = 1e6
runs, Blankenbach 1c and the figures boussinesq_nu.png, boussinesq_b.png: ra1e6.py (long)."""
import math
import os
import subprocess
import sys

import h5py
import numpy as np
try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib (Debian python3-matplotlib), a plotting dependency: run ./configure --with-bench")

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
# case 1c (Ra = 1e6, ~0.3 thermal times = 3e4 free-fall times at Pr = 1e4) is in ra1e6.py (long)
ref = {1e4: (4.884409, 42.864947), 1e5: (10.534095, 193.21454)}
grids = {1e4: ("32,25", "8000"), 1e5: ("64,41", "12000")}
for ra, (nu_ref, v_ref) in ref.items():
    d = run("blankenbach.yaml", f"bb_{ra:g}", "-boussinesq_rayleigh", repr(ra), "-boussinesq_cells", grids[ra][0], "-sim_t_end", grids[ra][1])
    kappa = 1 / math.sqrt(ra * 1e4)
    vrms = math.sqrt(2 * d["kinetic_energy"][-1]) / kappa
    print(f"Blankenbach Ra={ra:g} ({grids[ra][0]}): " + ", ".join(f"{k} {d[k][-1]:.6f}" for k in NUS) + f"; ref {nu_ref}; v_rms {vrms:.4f} (ref {v_ref}); rel. Nu err {d['nu_bottom'][-1] / nu_ref - 1:+.2e}")

# 3. Pr = 1, no-slip, 2 x 1: steady rolls at Ra = 1e4 and 1e5, the solver against the Newton reference
sys.path.insert(0, os.path.dirname(__file__))
import steady_rolls as sr  # noqa: E402

for ra, cells, grids in [(1e4, "32,33", [(16, 25), (24, 33), (32, 41)]), (1e5, "64,49", [(32, 33), (40, 41), (48, 49)])]:
    d = run("rb_ra1e4.yaml", f"pr1_{ra:g}", "-boussinesq_rayleigh", repr(ra), "-boussinesq_cells", cells, "-sim_t_end", "400", "-boussinesq_max_dt", "0.05")
    print(f"Pr=1 no-slip 2x1 Ra={ra:g} ({cells}): " + ", ".join(f"{k} {d[k][-1]:.7f}" for k in NUS))
    s, q = sr.solve(ra, 1, 2, *grids[0])
    for M, nz in grids:
        s2 = sr.Rolls(ra, 1, 2, M, nz)
        q = s2.newton(s2.interpolate(q, s))
        s = s2
        print(f"  Newton reference M = {M}, nz = {nz}: Nu {s.nusselt(q)[0]:.9f}, kinetic energy {s.kinetic_energy(q):.9e}")

# 4. resolution convergence (the runs of resolution_test.py): errors of Nu and of <b>_x(z)
zu = (np.arange(100) + 0.5) / 100


def steady(nx, nz):
    d = run("rb_ra1e4.yaml", f"res_{nx}x{nz}", "-boussinesq_cells", f"{nx},{nz}", "-sim_t_end", "300")
    with h5py.File(os.path.join(WORK, f"res_{nx}x{nz}.chk.h5"), "r") as f:
        b0 = f["values/boussinesq_b"][()].reshape(-1, nz)[0]
    z = np.sin(0.5 * np.pi * np.arange(nz) / (nz - 1)) ** 2
    return d["nu_bottom"][-1], np.polynomial.chebyshev.chebval(2 * zu - 1, np.polynomial.chebyshev.chebfit(2 * z - 1, b0, nz - 1))


fig, ax = plt.subplots(figsize=(6.5, 3.8))
for label, grids, ref, n_of in [("z: nx = 32, nz", [(32, n) for n in (9, 13, 17, 21, 25, 29)], (32, 41), lambda g: g[1]),
                                ("x: nz = 25, nx", [(n, 25) for n in (8, 12, 16, 20, 24)], (48, 25), lambda g: g[0])]:
    nr, pr = steady(*ref)
    res = [steady(*g) for g in grids]
    ns = [n_of(g) for g in grids]
    e_nu = [abs(nu - nr) for nu, _ in res]
    e_pr = [np.abs(p - pr).max() for _, p in res]
    print(f"resolution {label} = {ns}: Nu errors {['%.2e' % e for e in e_nu]}, <b>(z) errors {['%.2e' % e for e in e_pr]}")
    ax.semilogy(ns, e_nu, "o-", label=f"Nu, {label}")
    ax.semilogy(ns, e_pr, "s--", label=f"<b>_x(z), {label}")
ax.set_xlabel("points (nz or nx)")
ax.set_ylabel("error against the finest grid")
ax.set_title("Steady rolls, Ra = 1e4, Pr = 1, no-slip, 2 x 1: spectral convergence", fontsize=9)
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(os.path.join(DOCS, "boussinesq_resolution.png"), dpi=110)
