#!/usr/bin/python3
"""Where the viscous dissipation of a super-resolved field falls short (docs/mffn_experiments.md "A dissipation
term"): per fine row z, the mean over the held-out snapshots (t > 0) and the x columns of
|grad u|^2 + |grad w|^2 (the same finite differences as eval.py's ε_v) for each model's prediction,
relative to the truth's, on the Ra = 1e6 held-out set of an eval.sh directory.
  grad_profile.py WORK MODEL[=LABEL] [MODEL[=LABEL] ...] [--plot-docs]
WORK holds rb6_valid.h5 and MODEL.Ra1e6_heldout.f64 (eval.py writes them); prints the profile and
the share of the deficit in the four rows at each wall; --plot-docs writes docs/mffn_grad_profile.png."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval as E  # noqa: E402  (this folder's eval.py)


def profile(f, rr, dt, rows):
    acc, n = np.zeros(rows), 0
    for s, k in rr:
        du = E.derivs(f["u"][s:s + k, :rows], dt, rows)
        dw = E.derivs(f["w"][s:s + k, :rows], dt, rows)
        g = (du[1] ** 2 + du[2] ** 2 + dw[1] ** 2 + dw[2] ** 2)[1:]  # t > 0, as eval.py
        acc += g.sum(axis=(0, 2))
        n += g.shape[0] * g.shape[2]
    return acc / n


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    work = args[0]
    models = [a.split("=", 1)[0] for a in args[1:]]
    label = {a.split("=", 1)[0]: a.split("=", 1)[-1] for a in args[1:]}
    truth, time, member = E.load(os.path.join(work, "rb6_valid.h5"))
    nz = truth["b"].shape[1]
    E.NZ = nz
    rows = E.F * ((nz - 1) // E.F) + 1
    dt = time[1] - time[0]
    rr = E.runs(time, member)
    pt = profile(truth, rr, dt, rows)
    rel = {}
    for m in models:
        path = os.path.join(work, f"{m}.Ra1e6_heldout.f64")
        if not os.path.exists(path):
            sys.exit(f"grad_profile.py: {path} is missing (run eval.py on {work} first)")
        pm = profile(E.predicted(path, truth["b"].shape), rr, dt, rows)
        rel[m] = pm / pt - 1
        d = pm - pt
        print(f"{label[m]:28s} mean-square gradient {pm.sum() / pt.sum() - 1:+.2%} overall; share of the deficit in rows 0-3 {d[:4].sum() / d.sum():.2f}, "
              f"rows {rows - 4}-{rows - 1} {d[-4:].sum() / d.sum():.2f}, interior {d[4:-4].sum() / d.sum():.2f}")
    if "--plot-docs" in sys.argv:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        z = np.arange(rows) / nz
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
        ax[0].semilogy(z, pt, "k-", label="truth")
        ax[0].set_xlabel("z")
        ax[0].set_ylabel("<|∇u|² + |∇w|²>  (t, x mean)")
        ax[0].set_title("Ra = 1e6, held-out runs", fontsize=9)
        ax[0].legend(fontsize=8)
        for m in models:
            ax[1].plot(z, 100 * rel[m], ".-", ms=3, label=label[m])
        ax[1].axhline(0, color="k", lw=0.6)
        for k in range(0, rows, E.F):
            ax[1].axvline(k / nz, color="0.85", lw=0.5, zorder=0)
        ax[1].set_xlabel("z (grey: the low-res rows)")
        ax[1].set_ylabel("prediction / truth − 1 (%)")
        ax[1].set_title("mean-square velocity gradient per row, relative to the truth", fontsize=9)
        ax[1].legend(fontsize=7)
        fig.tight_layout()
        out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "mffn_grad_profile.png")
        fig.savefig(out, dpi=110)
        print("wrote", os.path.abspath(out))


if __name__ == "__main__":
    main()
