#!/usr/bin/python3
"""Summarise tests/bench/loader/run.sh results: table of samples/s and ratios, hit rates, plot.
Usage: report.py RESULTS.txt OUT.png"""
import sys
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

res, curve, ds = [], [], {}
for line in open(sys.argv[1]):
    kind, *kv = line.split()
    d = dict(x.split("=", 1) for x in kv if "=" in x)
    if kind == "RESULT":
        res.append(d)
    elif kind == "CURVE":
        curve.append({k: float(v) for k, v in d.items()})
    elif kind == "DATASET":
        ds = d

tags = ["loader", "loader_nobuffer", "loader_noreadahead", "naive", "torch_w0", "torch_w2"]
names = ["SgLoader (defaults)", "SgLoader, no buffer", "SgLoader, read-ahead off", "naive H5Dread", "PyTorch DataLoader w0", "PyTorch DataLoader w2"]
floors = [("raw_pread", "floor: raw rows, pread x2 + read-ahead"), ("raw_uring", "floor: raw rows, io_uring"), ("raw_seq", "storage bandwidth: sequential scan")]
floors = [(t, n) for t, n in floors if any(d.get("tag") == t for d in res)]  # older result files lack them
allrates = {t: [float(d["rate"]) for d in res if d.get("tag") == t] for t in tags + [t for t, _ in floors]}
best = {t: max((d for d in res if d.get("tag") == t), key=lambda d: float(d["rate"])) for t in allrates}
floorrates = [float(best[t]["rate"]) for t, _ in floors]
res = [best[t] for t in tags]
rates = [float(d["rate"]) for d in res]
print("all runs (samples/s):", {t: [round(r) for r in v] for t, v in allrates.items()})
torch_best = max(rates[4], rates[5])
print(f"\n{'reader':28s} {'samples/s':>10s} {'vs torch w0':>12s} {'vs torch w2':>12s} {'vs naive':>9s}  hit rate (Belady)")
for n, d, r in zip(names, res, rates):
    hr = f"{float(d['hitrate']):.4f} ({float(d['beladyrate']):.4f})" if "hitrate" in d else ""
    print(f"{n:28s} {r:10.0f} {r / rates[4]:12.2f} {r / rates[5]:12.2f} {r / rates[3]:9.2f}  {hr}")
for (t, n), r in zip(floors, floorrates):
    print(f"{n:28s} {r:10.0f} {r / rates[4]:12.2f} {r / rates[5]:12.2f} {r / rates[3]:9.2f}")
if floors:
    print(f"\nSgLoader reaches {rates[0] / floorrates[0]:.2f} of the raw random-row floor (same rows, same order, no HDF5, "
          f"no buffer); that floor is {floorrates[0] / torch_best:.2f}x the best PyTorch DataLoader")
ld = res[0]
gap = float(ld["beladyrate"]) - float(ld["hitrate"])
print(f"\nbar: SgLoader / best PyTorch DataLoader = {rates[0] / torch_best:.2f} (>= 5 wanted); "
      f"hit rate {float(ld['hitrate']):.4f} vs Belady optimum {float(ld['beladyrate']):.4f} (gap {gap:.4f}, <= 0.01 wanted)")

fig, ax = plt.subplots(1, 2, figsize=(11, 4))
names = names + [n for t, n in floors if t != "raw_seq"]  # the sequential scan is in the text, off this scale
rates = rates + [r for (t, _), r in zip(floors, floorrates) if t != "raw_seq"]
cols = ["tab:blue", "tab:cyan", "tab:purple", "tab:gray", "tab:orange", "tab:red"] + ["lightgray"] * (len(rates) - 6)
ax[0].barh(range(len(rates)), rates, color=cols)
ax[0].set_yticks(range(len(rates)))
ax[0].set_yticklabels(names)
ax[0].invert_yaxis()
ax[0].set_xlabel("samples / s (page cache dropped every epoch)")
for i, r in enumerate(rates):
    ax[0].text(r, i, f" {r:,.0f}", va="center", fontsize=8)
ax[0].set_title(f"{int(ds.get('n', 0)):,} frames, {int(ds.get('bytes', 0)) / 2**20:.0f} MiB, buffer 1/4, batch {ds.get('batch')}, {ds.get('epochs')} epochs", fontsize=9)
ax[0].set_xlim(0, max(rates) * 1.25)
fr = [c["frac"] for c in curve]
ax[1].plot(fr, [c["bound"] for c in curve], "k--", label="bound (E-1)C/(EN)")
ax[1].plot(fr, [c["belady_ordered"] for c in curve], "o-", color="tab:blue", label="SgLoader plan = Belady (ordered epochs)")
ax[1].plot(fr, [c["belady_unordered"] for c in curve], "x", color="tab:green", label="Belady, drawn epoch order")
ax[1].plot(fr, [c["lru"] for c in curve], "s-", color="tab:orange", label="LRU")
ax[1].plot([float(ds.get("budget", 0)) / float(ds.get("bytes", 1))], [float(ld["hitrate"])], "*", ms=14, color="tab:red", label="measured (SgLoader run)")
ax[1].set_xlabel("buffer / dataset")
ax[1].set_ylabel("buffer hit rate")
ax[1].legend(fontsize=8)
ax[1].grid(alpha=0.3)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
print("plot:", sys.argv[2])
