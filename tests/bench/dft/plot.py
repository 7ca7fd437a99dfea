"""Figures for docs/dft.md from tests/bench/dft/scaling.dat and decay_si512.dat.
Usage: /usr/bin/python3 tests/bench/dft/plot.py   (from the repository root)"""
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

rows = [l.split() for l in open("tests/bench/dft/scaling.dat") if not l.startswith("#")]
sub = sorted((int(r[0]), float(r[3])) for r in rows if r[1] == "submatrix" and r[2] == "1")
den = sorted((int(r[0]), float(r[3])) for r in rows if r[1] == "dense")
fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
n, t = np.array(sub).T
ax[0].loglog(n, t, "o-", label="submatrix (cluster 8, H pattern), 1 rank")
big = n >= 512
p = np.polyfit(np.log(n[big]), np.log(t[big]), 1)
ax[0].loglog(n[big], np.exp(np.polyval(p, np.log(n[big]))), "k--", lw=0.8, label=f"fit 512-8192: N^{p[0]:.2f}")
nd, td = np.array(den).T
ax[0].loglog(nd, td, "s-", label="dense dsyevd, 1 rank")
ax[0].loglog(nd, td[0] * (nd / nd[0]) ** 3, ":", color="gray", label="N^3 from 64 atoms")
ax[0].set_xlabel("atoms (diamond Si, Kwon TB)")
ax[0].set_ylabel("seconds per density matrix")
ax[0].set_title("Density-matrix time (shared 2-core machine, loaded)")
ax[0].legend(fontsize=8)
d = np.array([[float(x) for x in l.split()] for l in open("tests/bench/dft/decay_si512.dat") if not l.startswith("#")])
ax[1].semilogy(0.5 * (d[:, 0] + d[:, 1]), d[:, 2], "o")
for e in (1e-4, 1e-5, 1e-6):
    ax[1].axhline(e, ls="--", lw=0.7, color="gray")
ax[1].set_xlabel("distance |R_I - R_J| (A)")
ax[1].set_ylabel("max ||P_IJ||_F")
ax[1].set_title("Density-matrix decay, 512-atom Si (eps_filter lines)")
fig.tight_layout()
fig.savefig("docs/dft_scaling.png", dpi=110)
print("wrote docs/dft_scaling.png")
