#!/usr/bin/env python3
"""docs/deepmd_continuity.png: energy and force on an atom moving through the switching region and
across rcut (pair-potential model of inputs/deepmd/pair.yaml, rcut_smth 2.0, rcut 3.5 A).
usage: plot_continuity.py SCAN.txt ZOOM.txt OUT.png   (files from test_deepmd_tool scan)"""
import sys
import numpy as np
try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib (Debian python3-matplotlib), a plotting dependency: run ./configure --with-bench")
matplotlib.use("Agg")
import matplotlib.pyplot as plt
a = np.loadtxt(sys.argv[1]); z = np.loadtxt(sys.argv[2])
fig, ax = plt.subplots(1, 2, figsize=(11, 4))
ax[0].plot(a[:, 0], a[:, 1] - a[-1, 1], label="E - E(far)")
ax[0].plot(a[:, 0], a[:, 2], label="F_z on the moving atom")
for r, s in ((2.0, "rcut_smth"), (3.5, "rcut")): ax[0].axvline(r, color="k", lw=0.5, ls="--"); ax[0].text(r, ax[0].get_ylim()[1] * 0.9, s)
ax[0].set_xlabel("distance of the third atom from the centre (Å)"); ax[0].set_ylabel("eV, eV/Å"); ax[0].legend(loc="center right")
ax[0].set_title("Deep Potential through the C² switch")
ax[1].plot(z[:, 0], 1e9 * (z[:, 1] - z[-1, 1]), label="(E - E(far)) × 1e9")
ax[1].plot(z[:, 0], 1e6 * z[:, 2], label="F_z × 1e6")
ax[1].axvline(3.5, color="k", lw=0.5, ls="--"); ax[1].set_xlabel("distance (Å)"); ax[1].legend()
ax[1].set_title("zoom at rcut: E, F and dF/dr all go to 0 smoothly")
plt.tight_layout(); plt.savefig(sys.argv[3], dpi=110); print("wrote", sys.argv[3])
