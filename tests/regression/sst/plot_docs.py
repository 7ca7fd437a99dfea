#!/usr/bin/env python3
"""The figure of docs/sst.md: convergence of the two exact-solution cases, and a snapshot and the
anomaly of the 1-degree data set. Usage (repository root; ~2 min niced):
    python3 tests/regression/sst/plot_docs.py [sst_weekly.h5]
Without the data set it runs 2 years of inputs/sst/weekly.yaml itself."""
import os
import sys

import h5py
try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib (Debian python3-matplotlib), a plotting dependency: run ./configure --with-bench")
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import ROOT, deck, diagnostics, report, surge, workdir  # noqa: E402

w = workdir("sst_docs")
H = deck("sst/harmonic.yaml")
grids = [(18, 9), (36, 18), (72, 36), (144, 72)]
rot, dif = [], []
for n in grids:
    surge(["run", H, "-sst_cells", f"{n[0]},{n[1]}", "-sim_output", f"r{n[0]}", "-sim_progress_every", "100000"], w)
    rot.append(diagnostics(os.path.join(w, f"r{n[0]}.h5"))["exact_error"][-1])
for n in grids[:3]:
    surge(["run", H, "-sst_cells", f"{n[0]},{n[1]}", "-sst_flow", "none", "-sst_kappa", "10000", "-sst_harmonic_m", "0", "-sim_t_end", "500", "-sim_output", f"d{n[0]}", "-sim_progress_every", "100000"], w)
    r = report(os.path.join(w, f"d{n[0]}.h5"), "decay_rate")
    dif.append(abs(r[0] - r[1]) / r[1])
print("rotation max error:", rot)
print("decay-rate relative error:", dif)

if len(sys.argv) > 1:
    with h5py.File(sys.argv[1], "r") as f:
        n = int(f.attrs["nsamples"])
        T = f["samples/T"][n - 1]
        clim = f["samples/T"][max(0, n - 53):n].mean(0)
else:
    surge(["run", deck("sst/weekly.yaml"), "-sim_t_end", "728", "-sim_output", "two_years"], w)
    with h5py.File(os.path.join(w, "two_years.h5"), "r") as f:
        g = f["fields/T"]
        k = max(int(s) for s in g)
        T = g[str(k)][()]
        clim = np.mean([g[str(i)][()] for i in range(k - 52, k + 1)], axis=0)
land = T == 0
fig, ax = plt.subplots(1, 3, figsize=(16, 3.6))
h = [360 / g[0] for g in grids]
ax[0].loglog(h, rot, "o-", label="rigid rotation, max error")
ax[0].loglog(h[:3], dif, "s-", label="diffusion of sin(lat), decay-rate error")
ax[0].loglog(h, [rot[0] * (x / h[0]) ** 2 for x in h], "k--", lw=0.8, label="second order")
ax[0].set_xlabel("cell size (degrees)")
ax[0].legend(fontsize=8)
ax[0].set_title("exact solutions")
im = ax[1].imshow(np.where(land, np.nan, T), origin="lower", extent=[0, 360, -90, 90], cmap="viridis")
plt.colorbar(im, ax=ax[1], label="degC")
ax[1].set_title("T, last snapshot")
im = ax[2].imshow(np.where(land, np.nan, T - clim), origin="lower", extent=[0, 360, -90, 90], cmap="RdBu_r", vmin=-3, vmax=3)
plt.colorbar(im, ax=ax[2], label="degC")
ax[2].set_title("anomaly from the last year's mean")
plt.tight_layout()
out = os.path.join(ROOT, "docs", "sst.png")
plt.savefig(out, dpi=90)
print("wrote", out)
