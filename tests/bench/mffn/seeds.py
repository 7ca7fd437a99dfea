#!/usr/bin/python3
"""The spread over training seeds of MeshfreeFlowNet's evaluation (docs/mffn.md "Seeds").

  seeds.py WORK1 WORK2 ...

Each WORK is an eval.sh directory of one seed (SEED=s ARMS="..." bash eval.sh WORK) whose eval.json
eval.py has written. For every method present in all of them and every metric: the mean over the
seeds and the range, per evaluated set; then, per set, which metrics the mean of each mffn arm wins
against trilinear interpolation and against the U-Net at equal steps (`unet`), and where the
seeds' ranges overlap (a difference the seeds do not resolve); an arm evaluated with --project
("+proj") also against the projected baselines."""
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
    runs = []
    for w in sys.argv[1:]:
        path = os.path.join(w, "eval.json")
        if not os.path.exists(path):
            sys.exit(f"seeds.py: {path} is missing (run eval.py {w} first)")
        runs.append(json.load(open(path)))
    for name in runs[0]["sets"]:
        meth = [m for m in runs[0]["sets"][name]["methods"] if all(m in r["sets"][name]["methods"] for r in runs)]
        keys = FIELDS + STATS + PDE
        val = {m: {k: np.array([metric(r["sets"][name]["methods"][m], k) for r in runs]) for k in keys} for m in meth}
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


if __name__ == "__main__":
    main()
