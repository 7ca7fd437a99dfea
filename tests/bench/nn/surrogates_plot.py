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


# per panel: runs, the columns plotted (index, label), the columns compared (names from column 1), axes
PANELS = (("dp", ((3, "force RMSE, 4 validation frames"), (4, "force RMSE, training frame")),
           ("rmse_e_val", "rmse_e_trn", "rmse_f_val", "rmse_f_trn"),
           dict(ylabel="eV/Å", title="Deep Potential, water, f32: cpu (lines), cuda (dotted)")),
          ("mffn", ((1, "L1 fields"), (2, "L1 PDE residual")), ("l1_fields", "l1_pde", "loss"),
           dict(ylabel="loss (batch mean)", title="MeshfreeFlowNet, small deck, f64: cpu, cuda (dotted)")))


def main():
    d, png = sys.argv[1], sys.argv[2]
    fig, ax = plt.subplots(1, len(PANELS), figsize=(11, 4))
    for k, (name, plotted, compared, axes) in enumerate(PANELS):
        a, b, n = pair(d, name)
        for col, lab in plotted:
            ax[k].plot(b[:, 0], b[:, col], "-", lw=2.5, alpha=0.5, label=lab + " (cpu)")
            ax[k].plot(a[:, 0], a[:, col], "k:", lw=1)
        m = len(compared) + 1
        rel = np.max(np.abs(a[:, 1:m] - b[:, 1:m]) / np.abs(b[:, 1:m]), axis=0)
        print("%s: %d common steps; max relative difference cuda/cpu: %s" % (name, n, " ".join("%s %.1e" % c for c in zip(compared, rel))))
        ax[k].set(xlabel="step", yscale="log", **axes)
        ax[k].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
