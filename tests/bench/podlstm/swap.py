#!/usr/bin/env python3
"""POD-LSTM swapped in for the 1-degree sst solver through the field.advance slot, against the solver
alone (tests/bench/podlstm/run.sh runs it after the search; figure docs/podlstm_swap.png).

The solver runs the 480 weeks of spin-up and training period once (slot in the loop, the solver
serving) and writes a checkpoint; every variant restarts from it for the 700 test weeks:
  solver        the solver alone (static policy)
  resync 24/56  POD-LSTM 8 weeks per call, every 4th / 8th call handed back to the solver
  adaptive      the adaptive policy on the top-k spread (trust band from the spreads of the
                resync-24 run: its 25th and 75th percentile), with resync every 56 weeks
Printed: wall time of the 700 weeks and the speed-up over the solver alone, calls served by each,
the RMS difference of T from the solver alone (ocean cells) over the test period and its growth with
the weeks since the last re-synchronisation.
Usage: swap.py BENCHDIR MODEL.h5 [DOCSDIR]"""
import os
import re
import shutil
import subprocess
import sys
import time

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

W, MODEL = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DOCS = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.path.join(ROOT, "bin", "surge")
DECK = os.path.join(W, "swap1deg.yaml")
WARM = 3360.0
with open(DECK, "w") as f:
    f.write(f"""sim: {{solver: sst, t_end: 8253, field_every: 1, diag_every: 1, progress_every: 1000}}
sst:
  cells: [360, 180]
  seed: 1
  advance: {{dt: 7, snapshots: 8, warmup: {WARM:g}, surrogate: podlstm, swap_policy: static, swap_use: solver}}
  podlstm: {{model: {MODEL}}}
""")


def run(name, *opts):
    t0 = time.time()
    p = subprocess.run(["nice", "-n", "5", SURGE, "run", DECK, "-sim_output", name, *opts], cwd=W, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit(f"swap bench: {name} failed:\n{p.stdout[-3000:]}")
    return time.time() - t0, p.stdout


if not os.path.exists(os.path.join(W, "warm_3360.h5")):
    print("== the solver to t = %g days (480 weeks), checkpoint" % WARM)
    run("warm", "-sim_t_end", str(WARM))
    shutil.copy(os.path.join(W, "warm.chk.h5"), os.path.join(W, "warm_3360.chk.h5"))
    shutil.copy(os.path.join(W, "warm.h5"), os.path.join(W, "warm_3360.h5"))
variants = {"solver": ["-sst_advance_swap_use", "solver"],
            "resync 24": ["-sst_advance_swap_policy", "adaptive", "-sst_advance_resync_every", "24", "-sst_advance_swap_trust_lo", "1e20", "-sst_advance_swap_trust_hi", "1e20"],
            "resync 56": ["-sst_advance_swap_policy", "adaptive", "-sst_advance_resync_every", "56", "-sst_advance_swap_trust_lo", "1e20", "-sst_advance_swap_trust_hi", "1e20"]}
res = {}


def fields(name):
    with h5py.File(os.path.join(W, name + ".h5"), "r") as f:
        g = f["fields/T"]
        ks = sorted(int(k) for k in g)
        t = np.array([float(np.ravel(g[str(k)].attrs["time"])[0]) for k in ks])
        T = np.array([g[str(k)][()] for k in ks])
        cnt = np.array([f["report/advance_" + k][()][0] for k in ("solver_calls", "surrogate_calls", "switches", "rejected", "surrogate_fraction")])
    return t, T, cnt


def do(name, opts):
    tag = name.replace(" ", "")
    shutil.copy(os.path.join(W, "warm_3360.chk.h5"), os.path.join(W, tag + ".chk.h5"))
    shutil.copy(os.path.join(W, "warm_3360.h5"), os.path.join(W, tag + ".h5"))  # a restart continues the run's output
    wall, out = run(tag, "-restart", tag + ".chk.h5", "-restart_new_options", *opts)  # a variant branched from one checkpoint
    spreads = [float(x) for x in re.findall(r"uncertainty ([0-9.eE+-]+),", out)]
    res[name] = (wall, fields(tag), spreads, out)
    print(f"   {name:10s} wall {wall:7.1f} s")


for name, opts in variants.items():
    do(name, opts)
# the adaptive policy: a trust band from the spreads the resync-24 run saw (its log prints them at switches only: use the model on the run's own calls)
sp = [x for x in res["resync 24"][2] if x < 1e29]
lo, hi = (np.percentile(sp, 25), np.percentile(sp, 75)) if len(sp) >= 4 else (0.5, 1.0)
do("adaptive", ["-sst_advance_swap_policy", "adaptive", "-sst_advance_resync_every", "56", "-sst_advance_swap_trust_lo", f"{lo:.4g}", "-sst_advance_swap_trust_hi", f"{hi:.4g}"])

tref, Tref, _ = res["solver"][1]
land = Tref[0] == 0
test = tref > WARM + 1e-6
print(f"== 700 test weeks on the 1-degree grid (outputs every 8 weeks); adaptive trust band [{lo:.3g}, {hi:.3g}]")
print("   variant      wall (s)  speed-up  solver calls  podlstm calls  RMS dT vs solver (degC): mean   max")
rows = {}
for name, (wall, (t, T, cnt), _, _) in res.items():
    rms = np.sqrt(np.mean((T - Tref)[:, ~land] ** 2, axis=1))
    rows[name] = (t, rms)
    print(f"   {name:10s} {wall:9.1f}  {res['solver'][0] / wall:8.2f}  {cnt[0]:12.0f}  {cnt[1]:13.0f}  {rms[test].mean():28.3f}  {rms[test].max():5.3f}")
fig, ax = plt.subplots(1, 2, figsize=(12, 4))
for name, (t, rms) in rows.items():
    if name != "solver":
        ax[0].plot((t[test] - WARM) / 7, rms[test], "o-", ms=2, label=f"{name} (speed-up {res['solver'][0] / res[name][0]:.1f})")
ax[0].set_xlabel("weeks into the test period")
ax[0].set_ylabel("RMS of T - T(solver alone) (degC)")
ax[0].legend(fontsize=8)
ax[0].set_title("POD-LSTM swapped in for the SST solver")
names = [n for n in res if n != "solver"]
ax[1].bar(names, [res["solver"][0] / res[n][0] for n in names], color="C0")
ax[1].set_ylabel("speed-up over the solver alone (700 weeks)")
ax2 = ax[1].twinx()
ax2.plot(names, [rows[n][1][test].mean() for n in names], "ko-")
ax2.set_ylabel("mean RMS difference (degC)")
plt.tight_layout()
plt.savefig(os.path.join(DOCS, "podlstm_swap.png"), dpi=90)
print("wrote docs/podlstm_swap.png")
