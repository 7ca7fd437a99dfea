"""Figure for docs/vlasov.md: magnetic energy of the Weibel decks (1x2v p=2 and 2x3v p=1) against
exp(2 gamma t) with gamma the transverse dispersion root (0.098485, printed by the run's report).
Usage: /usr/bin/python3 tests/regression/vlasov/plot_weibel.py W1X2V.h5 W2X3V.h5 docs/vlasov_weibel.png
(the .h5 files from `bin/surge run inputs/vlasov/weibel.yaml -sim_diag_every 2` and
`bin/surge run inputs/vlasov/weibel_2x3v.yaml -sim_diag_every 2`)."""
import sys
import h5py
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

GAMMA = 0.098485  # root of the transverse relation for k = 0.4 (both decks; the report prints it)
fig, ax = plt.subplots(figsize=(6, 3.6))
for path, label in zip(sys.argv[1:3], ("1x2v p=2 (weibel.yaml)", "2x3v p=1 (weibel_2x3v.yaml)")):
    h = h5py.File(path, "r")
    t = h["diagnostics/time"][:]
    w = h["diagnostics/magnetic_energy"][:]
    ax.semilogy(t, w, label=label)
    if label.startswith("2x3v"):  # theory line anchored at t = 15, the start of the fit window
        i = np.argmin(abs(t - 15))
        tt = np.linspace(0, 35, 100)
        ax.semilogy(tt, w[i] * np.exp(2 * GAMMA * (tt - t[i])), "k--", lw=1, label="exp(2 gamma t), gamma = %.6f" % GAMMA)
ax.set_xlabel("t omega_pe")
ax.set_ylabel("magnetic energy")
ax.set_title("Weibel instability, k = 0.4, beams +-0.3 c, vt = 0.1")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[3], dpi=110)
print("wrote", sys.argv[3])
