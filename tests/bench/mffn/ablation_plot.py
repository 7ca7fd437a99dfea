#!/usr/bin/python3
"""docs/mffn_ablation.png from the logs of the Ra = 1e6 design runs (tests/bench/mffn/ablation.sh) and
the swap measurement (tests/bench/mffn/swap.py): figures, not pass/fail (docs/mffn.md "Evaluation").

  ablation_plot.py [WORK] [SWAP_JSON]     (defaults build/mffn_eval, build/bench-mffn-swap/swap.json)

Reads, for every NAME.log in WORK that ends with a held-out evaluation, the training curve NAME.lc
and the held-out table `surge train` prints (NMAE of the model and of trilinear interpolation of the
same low-res input, per field), and plots: the training loss against the step; the held-out NMAE of
each run divided by trilinear's (below 1: better than trilinear); the swap's errors against the fine
solve (Nu, KE, spectrum, b, u, w) for mffn, trilinear interpolation and the adaptive policy."""
import json
import os
import re
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CH = "pbuw"


def heldout(log):
    """{field: (nmae model, nmae trilinear)} from the table of a `surge train` log, or None"""
    rows = {}
    for line in open(log):
        m = re.match(r"mffn:\s+([pbuw])\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s*$", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return rows if len(rows) == 4 else None


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "mffn_eval")
    swap = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build", "bench-mffn-swap", "swap.json")
    runs = {}
    for f in sorted(os.listdir(work)):
        if f.endswith(".log") and os.path.exists(os.path.join(work, f[:-4] + ".lc")):
            h = heldout(os.path.join(work, f))
            if h:
                runs[f[:-4]] = h
    if not runs:
        sys.exit(f"ablation_plot.py: no training log with a held-out evaluation in {work} (ablation.sh makes them)")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(17, 4.6))
    for name in runs:
        lc = np.loadtxt(os.path.join(work, name + ".lc"), ndmin=2)
        ax[0].semilogy(lc[:, 0], lc[:, 3], "-" if "res" in name else "--", label=name)
        print(f"{name:14s} " + "  ".join(f"{c} {runs[name][c][0]:.3e}/{runs[name][c][1]:.3e} = {runs[name][c][0] / runs[name][c][1]:.2f}" for c in CH))
    ax[0].set(xlabel="step", ylabel="training loss (L1, normalised; 50-step means)", title="Ra = 1e6, gamma 0: training loss")
    ax[0].legend(fontsize=8)
    w = 0.8 / len(runs)
    for i, name in enumerate(runs):
        ax[1].bar(np.arange(4) + w * i, [runs[name][c][0] / runs[name][c][1] for c in CH], w, label=name)
    ax[1].axhline(1, color="k", lw=1)
    ax[1].set_xticks(np.arange(4) + 0.4 - w / 2)
    ax[1].set_xticklabels(list(CH))
    ax[1].set(ylabel="held-out NMAE / trilinear's", title="held-out Ra = 1e6 crops (below 1: beats trilinear)")
    ax[1].legend(fontsize=7)
    if os.path.exists(swap):
        err = json.load(open(swap))["error"]
        keys = [("nu_volume", "Nu"), ("kinetic_energy", "KE"), ("ke_spectrum", "spectrum"), ("b_rms_rel", "b"), ("u_rms_rel", "u"), ("w_rms_rel", "w")]
        names = [m for m in ("mffn", "trilinear", "adaptive") if m in err]
        for i, m in enumerate(names):
            lab = m + (f" ({err[m]['surrogate_answers']}/{err[m]['answers']} by mffn)" if m == "adaptive" else "")
            ax[2].bar(np.arange(len(keys)) + 0.8 * i / len(names), [err[m][k] for k, _ in keys], 0.8 / len(names), label=lab)
        ax[2].set_xticks(np.arange(len(keys)) + 0.4 - 0.4 / len(names))
        ax[2].set_xticklabels([l for _, l in keys])
        ax[2].set_yscale("log")
        ax[2].set(ylabel="error vs the fine solve", title="swap at Ra = 1e5 (shipped residual model)")
        ax[2].legend(fontsize=8)
    fig.tight_layout()
    out = os.path.join(ROOT, "docs", "mffn_ablation.png")
    fig.savefig(out, dpi=90)
    print("wrote", out)


if __name__ == "__main__":
    main()
