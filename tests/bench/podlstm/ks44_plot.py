#!/usr/bin/env python3
"""The figure of docs/podlstm.md "A larger domain: L = 44": the test error of u beyond the POD floor by lead
(Lyapunov times, lambda_1 = 0.078; log scale) of the study's models (bash tests/bench/podlstm/ks_study.sh --large),
one panel per trajectory: POD-LSTM (residual on the quadratic regression; one line per seed) against the
scores surge stored in each model for its base (the quadratic regression), VAR(p) and persistence.

    /usr/bin/python3 tests/bench/podlstm/ks44_plot.py [WORKDIR]   (default build/ks44q) -> docs/podlstm_ks44.png"""
import glob
import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
W = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "ks44q")
PNG = os.path.join(ROOT, "docs", "podlstm_ks44.png")
LAM = 0.078


def scores(path):
    with h5py.File(path, "r") as f:
        meth = f["scores"].attrs["methods"]
        meth = (meth.decode() if isinstance(meth, bytes) else str(meth)).split(";")
        r = f["scores/rmse_lead"][()][:, 0, :]
        D = float(f.attrs["dt"])
    return {k: r[i] for i, k in enumerate(meth)}, D


models = sorted(p for p in glob.glob(os.path.join(W, "ks44q_m*_s*.h5")) if os.path.basename(p).count(".") == 1)
if not models:
    sys.exit(f"ks44_plot: no models ks44q_m*_s*.h5 in {W}: run bash tests/bench/podlstm/ks_study.sh --large first")
members = sorted({int(os.path.basename(p).split("_m")[1].split("_")[0]) for p in models})
fig, axes = plt.subplots(1, len(members), figsize=(4.2 * len(members), 3.4), sharey=True, squeeze=False)
for ax, m in zip(axes[0], members):
    for p in [q for q in models if f"_m{m}_" in q]:
        sc, D = scores(p)
        floor = sc["POD truth (the floor)"]
        lead = (np.arange(floor.size) + 1) * D * LAM

        def beyond(k):
            return np.sqrt(np.maximum(sc[k] ** 2 - floor ** 2, 0))
        s = int(p.split("_s")[-1][:-3])
        ax.plot(lead, beyond("POD-LSTM"), "-o", ms=3, lw=1.2, color=f"C{s - 1}", label=f"POD-LSTM, seed {s}")
        if s == 1:  # the baselines do not depend on the seed
            for k, st, lab in ((next(q for q in sc if q.startswith("quadratic")), "k--", "quadratic regression (the base)"),
                               (next(q for q in sc if q.startswith("VAR(")), "k:", "VAR(p), p chosen on validation"), ("persistence", "k-.", "persistence")):
                ax.plot(lead, beyond(k), st, lw=1.2, label=lab)
    ax.set_title(f"trajectory {m}")
    ax.set_xlabel("lead (Lyapunov times)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
axes[0][0].set_ylabel("test RMSE of u beyond the POD floor")
axes[0][-1].legend(fontsize=7)
fig.suptitle("KS, L = 44, 18 POD modes: error beyond the floor by lead", fontsize=10)
fig.tight_layout()
fig.savefig(PNG, dpi=90)
print(f"wrote {PNG}")
