"""Figure for docs/swap.md from the runs of tests/regression/swap/swap_test.py (run that first):
the adaptive run's uncertainty with the trust band and the provider of every step, and the
potential energy of the adaptive run against the solver-only and surrogate-only runs."""
import os
import h5py
import sys
try:
    import matplotlib
except ImportError:
    sys.exit(f"{sys.argv[0]}: needs matplotlib (Debian python3-matplotlib), a plotting dependency: run ./configure --with-bench")
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
w = os.path.join(root, "tests", "logs", "work", "swap")


def diag(name):
    with h5py.File(f"{w}/{name}.h5", "r") as f:
        return {k: f["diagnostics"][k][()] for k in f["diagnostics"]}


a, s, u = diag("ada1"), diag("solver"), diag("sur")
st = a["step"]
fig, ax = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
ax[0].plot(st, a["uncertainty"], "k-", lw=0.8, label="surrogate uncertainty")
ax[0].axhline(0.3, color="g", ls="--", label="trust_lo")
ax[0].axhline(0.7, color="r", ls="--", label="trust_hi")
sur = a["surrogate_served"] == 1
ax[0].plot(st[sur], a["uncertainty"][sur], "o", ms=4, color="tab:blue", label="served by surrogate")
ax[0].plot(st[~sur], a["uncertainty"][~sur], "s", ms=5, color="tab:red", label="served by solver (retraining frame)")
ax[0].set_ylabel("uncertainty (epsilon/sigma)")
ax[0].set_ylim(-0.05, 1.3)
ax[0].legend(fontsize=7, loc="upper left", ncol=2)
ax[0].set_title("adaptive swap, 256-atom LJ liquid (NaN answer injected at step 13)")
ax[1].plot(st, s["pe"], "r-", label="solver only (lj)")
ax[1].plot(st, u["pe"], "b-", label="surrogate only (lj x 1.01)")
ax[1].plot(st, a["pe"], "k.", ms=3, label="adaptive")
ax[1].set_xlabel("step")
ax[1].set_ylabel("potential energy per atom")
ax[1].legend(fontsize=7)
fig.tight_layout()
out = os.path.join(root, "docs", "swap_adaptive.png")
fig.savefig(out, dpi=110)
print("wrote", out)
