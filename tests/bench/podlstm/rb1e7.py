#!/usr/bin/env python3
"""The Rayleigh-Benard Ra = 1e7 result of POD-LSTM (docs/podlstm.md "Chaotic convection at Ra = 1e7"):
reads the model files that `mpiexec -n 2 bin/surge train inputs/podlstm/rb1e7_train.yaml` writes (one
per search seed or data run) and prints, per method and forecast lead, the test RMSE of the
reconstructed b and its part beyond the POD floor, sqrt(RMSE^2 - floor^2) -- the forecast error no
5-mode method can avoid is the floor; the methods differ only above it. With --plot, writes the figure
docs/podlstm_rb1e7.png (that excess against the lead, one panel per model file).
Usage: rb1e7.py [--plot] LABEL=MODEL.h5 [LABEL=MODEL.h5 ...]"""
import os
import sys

import h5py
import numpy as np

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs")
SHOW = ("POD-LSTM (searched)", "POD-LSTM (top-3 mean)", "VAR", "hand LSTM")


def scores(path):
    with h5py.File(path, "r") as f:
        if "scores" not in f:
            sys.exit(f"rb1e7.py: {path} has no scores (trained with baselines off?)")
        g = f["scores"]
        methods = g.attrs["methods"]
        methods = (methods.decode() if isinstance(methods, bytes) else str(methods)).split(";")
        return methods, g["rmse"][:, 0], g["rmse_lead"][:, 0, :], int(g.attrs["windows"])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__)
    runs = [a.split("=", 1) for a in args]
    fig = None
    if "--plot" in sys.argv:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 3.8), squeeze=False)
    for i, (label, path) in enumerate(runs):
        methods, rmse, lead, nwin = scores(path)
        floor = [k for k, m in enumerate(methods) if m.startswith("POD truth")]
        if not floor:
            sys.exit(f"rb1e7.py: {path} has no POD floor among its scores")
        f0, fl = rmse[floor[0]], lead[floor[0]]
        print(f"{label} ({path}): test RMSE of b over {nwin} windows x {lead.shape[1]} leads; floor {f0:.5f}")
        print(f"   {'method':34s} {'RMSE':>8s} {'beyond floor':>12s}   beyond the floor by lead")
        for k, m in enumerate(methods):
            ex = np.sqrt(np.maximum(lead[k] ** 2 - fl ** 2, 0))
            print(f"   {m:34s} {rmse[k]:8.5f} {np.sqrt(max(rmse[k] ** 2 - f0 ** 2, 0)):12.3e}   " + " ".join(f"{x:.2e}" for x in ex))
            if fig is not None and any(m.startswith(s) for s in SHOW):
                ax = axes[0][i]
                ax.plot(np.arange(1, len(ex) + 1), ex, "o-", ms=3, label=f"{m} ({np.sqrt(max(rmse[k] ** 2 - f0 ** 2, 0)):.2e})")
        if fig is not None:
            ax = axes[0][i]
            ax.set_xlabel("lead (free-fall times)")
            ax.set_ylabel("√(RMSE² − floor²) of b")
            ax.set_title(f"{label}: floor {f0:.4f}", fontsize=9)
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
            ax.set_ylim(bottom=0)
    if fig is not None:
        fig.suptitle("POD-LSTM on chaotic Rayleigh–Bénard (Ra = 1e7): test forecast error beyond the 5-mode POD floor", fontsize=10)
        fig.tight_layout()
        out = os.path.join(DOCS, "podlstm_rb1e7.png")
        fig.savefig(out, dpi=110)
        print("wrote", os.path.abspath(out))


if __name__ == "__main__":
    main()
