#!/usr/bin/env python3
"""summary.py -- figures of the architecture search on P ranks of one machine (device/run.sh's OUTDIR):
  - best validation R2 against evaluations, aging evolution vs random search (and the residual search);
  - the test RMSE of the reconstructed field for the searched network, the top-k mean and the baselines;
  - the search model of ../report.py checked at P ranks: the candidates' training times on 1 and P ranks
    (the same candidates: random search proposes from (seed, id) alone), the gap between a rank's
    candidates, and the wall and utilisation it predicts from the 1-rank times against the measured ones.
A run killed before its model file was written is read from its search log (NAME.search/rank_*.h5).
Usage: summary.py OUTDIR [FIGURE.png]"""
import glob
import os
import sys

import h5py
import matplotlib
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from report import best_curve, load, overhead, simulate  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OUT = sys.argv[1]
FIG = sys.argv[2] if len(sys.argv) > 2 else None


def load_any(name):
    path = os.path.join(OUT, name + ".h5")
    if os.path.exists(path):
        return load(path)
    cols = {"id": "id", "rank": "rank", "r2": "r2", "t0": "t_start", "t1": "t_end", "sec": "seconds"}
    parts = []  # the search log: one file of evaluations per rank, a column per field under /samples
    for f in sorted(glob.glob(os.path.join(OUT, name + ".search", "rank_*.h5"))):
        with h5py.File(f, "r") as h:
            if "samples/id" in h:
                parts.append({k: h["samples/" + v][:].astype(float) for k, v in cols.items()})
    if not parts:
        return None
    r = {k: np.concatenate([q[k] for q in parts]) for k in cols}
    r.update(ev=r["id"], wall=float(r["t1"].max() - r["t0"].min()), util=float("nan"), partial=True)
    return r


if not os.path.exists(os.path.join(OUT, "machine.txt")):
    sys.exit(f"summary.py: {OUT} has no machine.txt: give the OUTDIR of device/run.sh")
with open(os.path.join(OUT, "machine.txt")) as f:
    print(f.readline().strip())
names = sorted({os.path.basename(p)[:-4] for p in glob.glob(os.path.join(OUT, "*.log"))})
runs = {n: r for n in names if (r := load_any(n)) is not None}
if not runs:
    sys.exit(f"summary.py: no search finished or logged in {OUT} (see its *.log)")
P = max(int(r["rank"].max()) + 1 for r in runs.values())
aging, rand, one = runs.get(f"aging{P}"), runs.get(f"random{P}"), runs.get("random1")

print("== best validation R2 after n evaluations (completion order)")
marks = (10, 20, 40, 80, 160, 320, 640, 1280)
for name, r in runs.items():
    b = best_curve(r)
    print(f"{name:12s} {len(b):4d} evaluations: " + "  ".join(f"{n}: {b[n - 1]:.4f}" for n in sorted({m for m in marks if m <= len(b)} | {len(b)})))
    if "methods" in r:
        for m, v in zip(r["methods"], r["rmse"]):
            print(f"{'':12s}   test RMSE {m:34s} {v:.5f}")

print(f"== the search on {P} ranks")
for name, r in runs.items():
    ranks = int(r["rank"].max()) + 1
    util = r["util"] if not r.get("partial") else np.sum(r["t1"] - r["t0"]) / (ranks * r["wall"])
    print(f"{name:12s} {ranks:2d} rank(s): {len(r['ev'])} evaluations, wall {r['wall']:.1f} s, utilisation {util:.3f}, "
          f"{3600 * len(r['ev']) / r['wall']:.0f} evaluations/hour, training time per candidate {np.mean(r['sec']):.2f} s, "
          f"gap between a rank's candidates {1e3 * overhead([r]):.1f} ms{' (from the search log: killed)' if r.get('partial') else ''}")
if one is not None and rand is not None:
    ids = np.intersect1d(one["id"], rand["id"])
    t1 = {int(i): t for i, t in zip(one["id"], one["t1"] - one["t0"])}
    tP = {int(i): t for i, t in zip(rand["id"], rand["t1"] - rand["t0"])}
    ratio = np.array([tP[int(i)] / t1[int(i)] for i in ids])
    print(f"the same {len(ids)} candidates on 1 and {P} ranks: a candidate took {np.median(ratio):.2f}x (median; "
          f"{ratio.min():.2f}-{ratio.max():.2f}) as long with {P} ranks busy")
    rng = np.random.default_rng(1)
    pool, over = one["t1"] - one["t0"], overhead([one])
    for name, r in ((f"random{P}", rand), (f"aging{P}", aging)):
        if r is None or r.get("partial"):
            continue
        # the model as used for hundreds of ranks: 1-rank times scaled to the run's own mean, 1-rank gap
        scaled = pool * np.mean(r["sec"]) / np.mean(pool)
        pred = [simulate(scaled, over, P, len(r["ev"]), rng) for _ in range(50)]
        print(f"model check {name}: predicted wall {np.mean([t for t, _ in pred]):.1f} s, utilisation {np.mean([u for _, u in pred]):.3f} "
              f"(1-rank times rescaled to this run's mean candidate time) vs measured {r['wall']:.1f} s, {r['util']:.3f}")

if FIG:
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for r, style, label in ((aging, "-", "aging evolution"), (rand, "--", "random search")):
        if r is not None:
            b = best_curve(r)
            ax[0].plot(np.arange(1, len(b) + 1), b, style, label=f"{label} ({P} ranks)")
    ax[0].set_xscale("log")
    ax[0].set_xlabel("evaluations")
    ax[0].set_ylabel("best validation R$^2$")
    ax[0].legend()
    ax[0].set_title("architecture search, 5-degree SST data")
    if aging is not None:
        for i in range(len(aging["ev"])):
            ax[1].barh(aging["rank"][i], aging["t1"][i] - aging["t0"][i], left=aging["t0"][i],
                       color=plt.cm.viridis(max(0, aging["r2"][i])), edgecolor="k", lw=0.2)
        ax[1].set_xlabel("time (s)")
        ax[1].set_ylabel("rank")
        ax[1].set_title(f"aging evolution on {P} ranks: candidates per rank")
    plt.tight_layout()
    plt.savefig(FIG, dpi=90)
    print("wrote", FIG)
