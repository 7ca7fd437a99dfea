#!/usr/bin/python3
"""Ra = 1e6, Pr = 1, no-slip: long runs to a statistically steady state, their time-mean Nusselt
numbers with error bars, and the figures of docs/boussinesq.md (not part of make check).

Usage (after make; resumable: a run restarts from its checkpoint, a finished run is only read):
  nice -n 5 /usr/bin/python3 tests/regression/boussinesq/ra1e6.py [WORKDIR]   (default build/ra1e6)
Runs (Pr = 1: rb_ra1e4.yaml with -boussinesq_rayleigh 1e6, cfl 0.5, max_dt 0.05, diagnostics every
5 steps):
  g2_128x64    2 x 1 (Johnston & Doering's periodic aspect ratio 2), 128 x 64, t = 0..1000
  g2_192x96    the same on 192 x 96, t = 0..400 (resolution check of the time means)
  g4_256x64    4 x 1 (MeshfreeFlowNet's box), 256 x 64, t = 0..1000
  bb1c_128x49  Blankenbach et al. (1989) case 1c: blankenbach.yaml at Ra = 1e6 (Pr = 1e4, free-slip,
               2 x 1), 128 x 49, t = 0..30000 free-fall times = 0.3 thermal diffusion times
Analysis: time means over t >= 200 of the five Nusselt estimates (the onset burst is at t ~ 15;
the mean of the oscillation still drifts by ~2% over t = 100..150 and is settled after ~200); the
error bar of a mean is the standard error of the means of 10 blocks of equal length (the flows
oscillate with a period of 5.8, so a block spans ~14 periods; the partial periods at the block
ends are what the error bar mostly measures); the exact relations between the
estimates with the storage terms of the window (kinetic energy from the diagnostics; see
budgets_test.py). Writes docs/boussinesq_nu.png (Nu(t) of the 4 x 1 run) and docs/boussinesq_b.png
(its last b snapshot) and prints the numbers quoted in the docs."""
import os
import shutil
import subprocess
import sys
import time

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
DECK = os.path.join(ROOT, "inputs", "boussinesq", "rb_ra1e4.yaml")
DOCS = os.path.join(ROOT, "docs")
WORK = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ra1e6"))
NUS = ["nu_bottom", "nu_top", "nu_volume", "nu_eps_viscous", "nu_eps_thermal"]
PR1 = ["-boussinesq_rayleigh", "1e6", "-boussinesq_max_dt", "0.05", "-sim_diag_every", "5", "-sim_field_every", "20000"]
RUNS = {  # name: (deck, t_end, options); the Pr = 1 runs' Lx, nx, nz are in their names
    "g2_128x64": ("rb_ra1e4.yaml", 1000, PR1 + ["-boussinesq_length", "2,1", "-boussinesq_cells", "128,64"]),
    "g2_192x96": ("rb_ra1e4.yaml", 400, PR1 + ["-boussinesq_length", "2,1", "-boussinesq_cells", "192,96"]),
    "g4_256x64": ("rb_ra1e4.yaml", 1000, PR1 + ["-boussinesq_length", "4,1", "-boussinesq_cells", "256,64"]),
    "bb1c_128x49": ("blankenbach.yaml", 30000, ["-boussinesq_rayleigh", "1e6", "-boussinesq_cells", "128,49", "-sim_diag_every", "100"]),
}
T0, NBLOCK = 200.0, 10
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def run(name):
    deck, t_end, opts = RUNS[name]
    h5 = os.path.join(WORK, name + ".h5")
    if os.path.exists(h5):
        with h5py.File(h5, "r") as f:
            if f["diagnostics/time"][-1] >= t_end - 1e-9:
                return
    args = [SURGE, "run", os.path.join(ROOT, "inputs", "boussinesq", deck), *opts, "-sim_t_end", str(t_end),
            "-sim_checkpoint_every", "5000", "-sim_progress_every", "10000", "-sim_output", name]
    chk = os.path.join(WORK, name + ".chk.h5")
    if os.path.exists(chk):  # resume
        shutil.copy(chk, os.path.join(WORK, name + ".restart.h5"))
        args += ["-restart", name + ".restart.h5"]
    print("running:", " ".join(args[1:]), flush=True)
    t = time.time()
    with open(os.path.join(WORK, name + ".log"), "a") as log:
        subprocess.run(args, cwd=WORK, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    print(f"  {name}: {time.time() - t:.0f} s of wall time", flush=True)


def analyse(name):
    with h5py.File(os.path.join(WORK, name + ".h5"), "r") as f:
        d = {k: f["diagnostics"][k][()] for k in f["diagnostics"]}
    t = d["time"]
    sel = t >= T0
    tt = t[sel]
    edges = np.linspace(tt[0], tt[-1], NBLOCK + 1)

    def mean(x, a, b):
        s = (tt >= a) & (tt <= b)
        return np.trapz(x[sel][s], tt[s]) / (tt[s][-1] - tt[s][0])

    out = {}
    for k in NUS:
        blocks = [mean(d[k], a, b) for a, b in zip(edges[:-1], edges[1:])]
        out[k] = (mean(d[k], tt[0], tt[-1]), np.std(blocks, ddof=1) / np.sqrt(NBLOCK))
    kappa = 1e6**-0.5
    ke = d["kinetic_energy"][sel]
    out["ke_storage"] = (ke[-1] - ke[0]) / (kappa * (tt[-1] - tt[0]))
    out["window"] = (tt[0], tt[-1])
    out["d"] = d
    return out


def main():
    os.makedirs(WORK, exist_ok=True)
    for name in RUNS:
        run(name)
    res = {name: analyse(name) for name in RUNS if name.startswith("g")}
    for name, r in res.items():
        nv = r["nu_volume"][0]
        print(f"{name}, t = {r['window'][0]:.0f}..{r['window'][1]:.0f}: "
              + ", ".join(f"{k} {m:.4f} +- {e:.4f}" for k, (m, e) in ((k, r[k]) for k in NUS))
              + f"; max rel. spread of the five {max(abs(r[k][0] / nv - 1) for k in NUS):.2e}"
              + f"; <Nu_volume> - <1 + eps_nu/kappa> = {nv - r['nu_eps_viscous'][0]:+.2e} (kinetic storage {r['ke_storage']:+.2e})")
    with h5py.File(os.path.join(WORK, "bb1c_128x49.h5"), "r") as f:  # Blankenbach 1c: steady, the last values
        d = {k: f["diagnostics"][k][()] for k in f["diagnostics"]}
    vrms = np.sqrt(2 * d["kinetic_energy"][-1]) / (1e6 * 1e4) ** -0.5
    print(f"Blankenbach 1c (Pr = 1e4, 128 x 49, t = {d['time'][-1]:g}): " + ", ".join(f"{k} {d[k][-1]:.6f}" for k in NUS)
          + f"; v_rms {vrms:.4f}; published Nu 21.972465, v_rms 833.98977; rel. Nu error {d['nu_bottom'][-1] / 21.972465 - 1:+.2e}"
          + f"; Nu change over the last 10% of the run {abs(d['nu_bottom'][-1] - d['nu_bottom'][int(0.9 * len(d['time']))]):.1e}")
    d = res["g4_256x64"]["d"]
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for k in NUS:
        ax.plot(d["time"], d[k], lw=0.5, label=k)
    m = {k: res["g4_256x64"][k][0] for k in NUS}
    ax.axvline(T0, color="k", lw=0.6, ls=":")
    ax.set_xlabel("t (free-fall times)")
    ax.set_ylabel("Nu")
    ax.set_ylim(0, 25)
    ax.set_title("Ra = 1e6, Pr = 1, 4 x 1, no-slip, 256 x 64: five Nusselt estimates; means over t >= %g: %.3f .. %.3f" % (T0, min(m.values()), max(m.values())), fontsize=9)
    ax.legend(fontsize=7, ncol=5, loc="upper right")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "boussinesq_nu.png"), dpi=110)
    with h5py.File(os.path.join(WORK, "g4_256x64.h5"), "r") as f:
        g = f["fields/b"]
        k = max(int(x) for x in g)
        b = g[str(k)][()]
        tb = float(np.squeeze(g[str(k)].attrs.get("time", np.nan)))
    fig, ax = plt.subplots(figsize=(9, 2.6))
    im = ax.imshow(b, origin="lower", extent=[0, 4, 0, 1], cmap="RdBu_r", vmin=-0.5, vmax=0.5, aspect="equal")
    fig.colorbar(im, ax=ax, label="b")
    ax.set_title(f"b at t = {tb:.1f}, Ra = 1e6, Pr = 1, 4 x 1 (256 x 64 uniform cells)", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "boussinesq_b.png"), dpi=110)


if __name__ == "__main__":
    main()
