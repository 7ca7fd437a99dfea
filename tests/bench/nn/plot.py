#!/usr/bin/env python3
"""plot.py RUN_OUTPUT PNG -- bar chart of surge/PyTorch step-time ratios from tests/bench/nn/run.sh output
(first table: bench thr surge_ms torch_ms ratio ...). A bar below the dashed line at 1: surge faster."""
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 8 and p[1] in ("1", "2") and p[0] in ("dp", "conv", "lstm", "force"):
        rows.append((p[0], int(p[1]), float(p[2]), float(p[3])))
if not rows:
    sys.exit("plot.py: no benchmark rows in %s (expected run.sh output)" % sys.argv[1])
names = {"dp": "DP fitting net\n(f64)", "conv": "conv3d block\n(f32)", "lstm": "2-layer LSTM\n(f32)",
         "force": "force-loss MLP\n(f64, 2nd order)"}
benches = [b for b in ("dp", "conv", "lstm", "force") if any(r[0] == b for r in rows)]
fig, ax = plt.subplots(figsize=(7.5, 3.8))
w = 0.36
for k, thr in enumerate((1, 2)):
    xs, ys, lab = [], [], []
    for i, b in enumerate(benches):
        r = [r for r in rows if r[0] == b and r[1] == thr]
        if r:
            xs.append(i + (k - 0.5) * w)
            ys.append(r[0][2] / r[0][3])
            lab.append("%.1f / %.1f ms" % (r[0][2], r[0][3]))
    bars = ax.bar(xs, ys, w, label="%d thread%s" % (thr, "s" if thr > 1 else ""))
    for x, y, t in zip(xs, ys, lab):
        ax.text(x, y + 0.02, t, ha="center", va="bottom", fontsize=6.5, rotation=90)
ax.axhline(1.0, ls="--", c="k", lw=1)
ax.set_xticks(range(len(benches)))
ax.set_xticklabels([names[b] for b in benches], fontsize=8)
ax.set_ylabel("surge / PyTorch time per training step")
ax.set_ylim(0, 1.35)
ax.set_title("surge NN engine vs PyTorch 1.13 (CPU), best of rounds; labels: surge / torch", fontsize=9)
ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=130)
print("wrote", sys.argv[2])
