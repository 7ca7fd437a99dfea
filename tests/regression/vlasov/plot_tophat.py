"""Figure for docs/vlasov.md: LBO relaxation of the 1x1v top-hat + bump (inputs/vlasov/lbo_tophat_1x1v.yaml).
Usage: /usr/bin/python3 tests/regression/vlasov/plot_tophat.py OUTPUT.h5 docs/vlasov_tophat.png
(OUTPUT.h5 from `bin/surge run inputs/vlasov/lbo_tophat_1x1v.yaml -sim_field_every 100`)."""
import sys
import h5py
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

h = h5py.File(sys.argv[1], "r")
groups = sorted(h["fields/f_elc"].keys(), key=int)
v = -6 + 0.5 * (np.arange(24) + 0.5)
n, p, e = (h["diagnostics/" + k][-1] / 10 for k in ("number_elc", "momentum_x", "kinetic_energy"))
u = p / n
T = 2 * e / n - u * u
fig, ax = plt.subplots(figsize=(6, 3.6))
for g in groups:
    f = h["fields/f_elc/" + g][:, 0]
    t = h["fields/f_elc/" + g].attrs.get("time", None)
    ax.step(v, f, where="mid", label="t = %s" % (("%g" % t) if t is not None else g))
vv = np.linspace(-6, 6, 400)
ax.plot(vv, n / np.sqrt(2 * np.pi * T) * np.exp(-(vv - u) ** 2 / (2 * T)), "k--", lw=1, label="Maxwellian of the moments")
ax.set_xlabel("v / v_th"); ax.set_ylabel("cell average of f")
ax.set_title("LBO relaxation of a top-hat + bump (1x1v p=2, 24 cells, nu = 1)")
ax.legend(fontsize=7)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
