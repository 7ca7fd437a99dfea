#!/usr/bin/python3
"""Learning curves of tests/bench/nn/surrogates_cuda.sh, -nn_backend cuda against cpu (docs/nn.md
"Surrogates on a GPU"), and the largest relative difference between them.
  surrogates_plot.py DIR PNG
DIR: the results (results.tgz unpacked: NAME.lcurve, or the progress rows of NAME.out where a run
was stopped before it wrote its learning curve), NAME = dp_cuda, dp_cpu, mffn_cuda, mffn_cpu."""
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def rows(d, name):
    """the progress rows (step first, wall time last) of a run: its learning curve, else its output"""
    for ext in (".lcurve", ".out", ".log"):
        p = os.path.join(d, name + ext)
        if os.path.exists(p):
            out = []
            for line in open(p):
                f = line.split()
                if len(f) >= 5 and f[0].isdigit():
                    try:
                        out.append([float(v) for v in f])
                    except ValueError:
                        pass
            if out:
                return np.array(out)
    sys.exit("surrogates_plot.py: no progress rows for %s in %s" % (name, d))


def pair(d, name):
    """the rows of NAME_cuda and NAME_cpu at the steps both have (a stopped run ends off the grid)"""
    a, b = rows(d, name + "_cuda"), rows(d, name + "_cpu")
    common = np.intersect1d(a[:, 0], b[:, 0])
    return a[np.isin(a[:, 0], common)], b[np.isin(b[:, 0], common)], len(common)


def main():
    d, png = sys.argv[1], sys.argv[2]
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    # DP: rmse_e_val rmse_e_trn rmse_f_val rmse_f_trn (columns 1-4)
    a, b, n = pair(d, "dp")
    for col, lab in ((3, "force RMSE, 4 validation frames"), (4, "force RMSE, training frame")):
        ax[0].plot(b[:n, 0], b[:n, col], "-", lw=2.5, alpha=0.5, label=lab + " (cpu)")
        ax[0].plot(a[:n, 0], a[:n, col], "k:", lw=1)
    rel = np.max(np.abs(a[:n, 1:5] - b[:n, 1:5]) / np.abs(b[:n, 1:5]), axis=0)
    print("dp: %d common steps; max relative difference cuda/cpu: rmse_e_val %.1e rmse_e_trn %.1e rmse_f_val %.1e rmse_f_trn %.1e" % (n, *rel))
    ax[0].set(xlabel="step", ylabel="eV/Å", yscale="log", title="Deep Potential, water, f32: cpu (lines), cuda (dotted)")
    ax[0].legend(fontsize=8)
    a, b, n = pair(d, "mffn")
    for col, lab in ((1, "L1 fields"), (2, "L1 PDE residual")):
        ax[1].plot(b[:n, 0], b[:n, col], "-", lw=2.5, alpha=0.5, label=lab + " (cpu)")
        ax[1].plot(a[:n, 0], a[:n, col], "k:", lw=1)
    rel = np.max(np.abs(a[:n, 1:4] - b[:n, 1:4]) / np.abs(b[:n, 1:4]), axis=0)
    print("mffn: %d common steps; max relative difference cuda/cpu: l1_fields %.1e l1_pde %.1e loss %.1e" % (n, *rel))
    ax[1].set(xlabel="step", ylabel="loss (batch mean)", yscale="log", title="MeshfreeFlowNet, small deck, f64: cpu, cuda (dotted)")
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
