#!/usr/bin/python3
"""The spread over training seeds of MeshfreeFlowNet's evaluation (docs/mffn.md "The result: ten seeds").

  seeds.py WORK1 WORK2 ... [--plot PNG ARM] [--keep-untrained]

Each WORK is an eval.sh directory of one seed (SEED=s ARMS="..." bash eval.sh WORK) whose eval.json
eval.py has written. For every method present in all of them and every metric: the mean over the
seeds and the range, per evaluated set; then, per set, which metrics the mean of each mffn arm wins
against trilinear interpolation and against the U-Net at equal steps (`unet`), and where the
seeds' ranges overlap (a difference the seeds do not resolve); an arm evaluated with --project
("+proj") also against the projected baselines. --plot draws, per set, every metric of ARM (e.g.
mffn_c24etf+proj) and of trilinear interpolation divided by the U-Net's, the seeds' mean with
one standard error of the ratio (docs/mffn_seeds.png). A seed whose U-Net did not train (every
physical statistic within 5 % of trilinear interpolation's on the first set: the plateau rule can
freeze it at the starting level) would decide every mean against the baseline: it is named and
left out unless --keep-untrained."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eval import metric  # noqa: E402  (this folder's eval.py: pde_b .. pde_c from the pde list)

STATS = ["rel_ke", "rel_eps_v", "rel_eps_t", "rel_nu", "rel_spec", "rel_spec_snap"]
FIELDS = [f"nmae_{c}" for c in "pbuw"]
PDE = ["pde_b", "pde_x", "pde_z", "pde_c"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    args, plot = sys.argv[1:], None
    if "--plot" in args:
        i = args.index("--plot")
        plot, args = args[i + 1:i + 3], args[:i] + args[i + 3:]
        if len(plot) < 2:
            sys.exit("seeds.py: --plot needs PNG and ARM")
    keep = "--keep-untrained" in args
    args = [a for a in args if a != "--keep-untrained"]
    runs, panels = [], {}
    for w in args:
        path = os.path.join(w, "eval.json")
        if not os.path.exists(path):
            sys.exit(f"seeds.py: {path} is missing (run eval.py {w} first)")
        r = json.load(open(path))
        if untrained(r) and not keep:
            print(f"seeds.py: {w}: the U-Net did not train (its statistics are trilinear's to 5 %): left out (--keep-untrained keeps it)")
            continue
        runs.append(r)
    if not runs:
        sys.exit("seeds.py: no run left")
    for name in runs[0]["sets"]:
        meth = [m for m in runs[0]["sets"][name]["methods"] if all(m in r["sets"][name]["methods"] for r in runs)]
        keys = FIELDS + STATS + PDE
        val = {m: {k: np.array([metric(r["sets"][name]["methods"][m], k) for r in runs]) for k in keys} for m in meth}
        panels[name] = val
        print(f"\n== {name}: mean over {len(runs)} seeds [min, max]")
        for i, part in enumerate((keys[:5], keys[5:10], keys[10:])):
            print(f"{'method' if i == 0 else '':24s}" + "".join(f"{k:>27s}" for k in part))
            for m in meth:
                print(f"{m:24s}" + "".join(f"  {val[m][k].mean():.3e} [{val[m][k].min():.2e},{val[m][k].max():.2e}]" for k in part))
        for m in meth:
            if not m.startswith("mffn"):
                continue
            refs = [("trilinear", keys), ("unet", STATS + PDE)]
            if m.endswith("+proj"):  # also against the same projection of the baselines
                refs += [("trilinear+proj", keys), ("unet+proj", STATS + PDE)]
            for ref, ks in refs:
                if ref not in val:
                    continue
                lost = [k for k in ks if val[m][k].mean() >= val[ref][k].mean()]
                overlap = [k for k in ks if val[m][k].max() >= val[ref][k].min() and val[m][k].min() <= val[ref][k].max()]
                print(f"{m} against {ref}: mean wins {len(ks) - len(lost)} of {len(ks)}"
                      + (f"; loses {', '.join(lost)}" if lost else "") + (f"; ranges overlap on {', '.join(overlap)}" if overlap else ""))
                if ref.startswith("unet"):  # paired by seed: how often each seed's model wins
                    print(f"{'':4s}won per seed: " + ", ".join(f"{k.replace('rel_', '')} {int((val[m][k] < val[ref][k]).sum())}/{len(runs)}" for k in ks))
    if plot:
        draw(panels, *plot, len(runs))


def untrained(run):
    """whether run's U-Net (if any) answers like trilinear interpolation: every physical statistic
    within 5 % of trilinear's on the first evaluated set"""
    first = next(iter(run["sets"].values()))["methods"]
    if "unet" not in first or "trilinear" not in first:
        return False
    return all(abs(metric(first["unet"], k) / metric(first["trilinear"], k) - 1) < 0.05 for k in STATS)


def rel_se(y):
    """the standard error of the mean of the seeds' values y, relative to the mean"""
    return y.std(ddof=1) / np.sqrt(len(y)) / y.mean() if len(y) > 1 else 0.0


def draw(panels, png, arm, nseeds):
    """ARM's and trilinear's metrics over the U-Net's, per set: mean ratio and one standard error"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = FIELDS + STATS + PDE
    fig, ax = plt.subplots(len(panels), 1, figsize=(12, 3.6 * len(panels)), squeeze=False)
    for a, (name, val) in zip(ax[:, 0], panels.items()):
        if arm not in val or "unet" not in val:
            sys.exit(f"seeds.py: --plot: {arm} or unet is not in every run of {name}")
        x = np.arange(len(keys))
        for j, (m, col) in enumerate(((arm, "C3"), ("trilinear", "C0"))):
            r, e = [], []
            for k in keys:
                u, v = val["unet"][k], val[m][k]
                q = v.mean() / u.mean()
                r.append(q)
                e.append(q * np.hypot(rel_se(u), rel_se(v)))
            a.bar(x + (j - 0.5) * 0.38, r, 0.38, yerr=e, color=col, label=m, capsize=2)
        a.axhline(1, color="k", lw=0.8)
        a.set_yscale("log")
        a.set_xticks(x)
        a.set_xticklabels([k.replace("rel_", "").replace("nmae_", "NMAE ") for k in keys], rotation=30, fontsize=8)
        a.set_ylabel("metric / U-Net's")
        a.set_title(f"{name}: mean of {nseeds} seeds, error bars one standard error (below 1: better than the plain U-Net)")
        a.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print("wrote", png)


if __name__ == "__main__":
    main()
