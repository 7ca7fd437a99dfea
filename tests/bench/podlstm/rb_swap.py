#!/usr/bin/env python3
"""POD-LSTM swapped in for the Rayleigh-Benard solver (physics/boussinesq's field.advance slot) over the
test period t = 150 .. 250 of inputs/podlstm/rb_swap.yaml, against the solver alone: the same run
restarted from a checkpoint at t = 150 (written by the solver alone), with
  solver     the solver alone
  surrogate  POD-LSTM serves every call (the schedule policy from the checkpoint on): a free run
  adaptive   the solver takes every call whose top-3 spread exceeds trust_hi (the median spread of
             the free run) -- the provider's uncertainty at work
  resyncM    POD-LSTM whenever it may, the solver re-synchronising after M surrogate snapshots in a row
             (advance resync_every M, SgAdvanceLoop): M = 8 and 24, one and three surrogate calls of 8
             snapshots per solver call
Prints wall times, speed-ups, calls served, and the RMS difference of b from the solver alone at every
call (2 free-fall times); figure docs/podlstm_rb_swap.png.
With --ra1e7 the same for chaotic convection, inputs/podlstm/rb1e7_swap.yaml: the solver to t = 2300
(the model's test period starts there; ~10 min), the variants over t = 2300 .. 2400 (12 calls of 8
free-fall times and one of 4); figure docs/podlstm_rb1e7_swap.png.
Usage: rb_swap.py WORKDIR MODEL.h5 [DOCSDIR] [--ra1e7]   (WORKDIR holds or receives rbwarm.h5/.chk.h5;
SURGE=path overrides bin/surge)"""
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

RA1E7 = "--ra1e7" in sys.argv
args = [a for a in sys.argv[1:] if a != "--ra1e7"]
W, MODEL = os.path.abspath(args[0]), os.path.abspath(args[1])
DOCS = args[2] if len(args) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs")
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.environ.get("SURGE", os.path.join(ROOT, "bin", "surge"))
DECK = os.path.join(ROOT, "inputs", "podlstm", "rb1e7_swap.yaml" if RA1E7 else "rb_swap.yaml")
# the warm-up end, the run's end, the free-fall time of one call (8 snapshots), the figure
T0, T1, CALL, PNG, RA = (2300, 2400, 8.0, "podlstm_rb1e7_swap.png", "1e7") if RA1E7 else (150, 250, 2.0, "podlstm_rb_swap.png", "5e5")
WARM = int(round(T0 / CALL))  # solver calls of the warm-up


def run(name, *opts):
    t0 = time.time()
    p = subprocess.run(["nice", "-n", "5", SURGE, "run", DECK, "-sim_output", name, "-boussinesq_podlstm_model", MODEL, "-boussinesq_advance_resync_every", "0", *opts], cwd=W, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        sys.exit(f"rb swap bench: {name} failed:\n{p.stdout[-3000:]}")
    return time.time() - t0, p.stdout


if not os.path.exists(os.path.join(W, "rbwarm.chk.h5")):
    print(f"== the solver to t = {T0} ({WARM} calls), checkpoint")
    run("rbwarm", "-sim_t_end", str(T0), "-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "solver")


def do(name, *opts):
    for ext in (".h5", ".chk.h5"):
        shutil.copy(os.path.join(W, "rbwarm" + ext), os.path.join(W, name + ext))
    wall, out = run(name, "-restart", name + ".chk.h5", "-restart_new_options", *opts)  # a variant branched from the solver's checkpoint
    with h5py.File(os.path.join(W, name + ".h5"), "r") as f:
        g = f["fields/b"]
        ks = sorted(int(k) for k in g)
        t = np.array([float(np.ravel(g[str(k)].attrs["time"])[0]) for k in ks])
        b = np.array([g[str(k)][()] for k in ks])
        cnt = [int(f["report/advance_" + k][()][0]) for k in ("solver_calls", "surrogate_calls")]
    unc = [float(x) for x in re.findall(r"uncertainty ([0-9.eE+-]+),", out)]
    print(f"   {name:10s} wall {wall:6.1f} s, solver {cnt[0]} calls, podlstm {cnt[1]}")
    return wall, t, b, cnt, unc


res = {"solver": do("solver", "-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "solver")}
res["surrogate"] = do("surrogate", "-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "surrogate")
# a trust band from the spreads of the free run (the provider's uncertainty is printed at a switch only: take the
# spreads by a short adaptive pass with a band nothing leaves)
probe = do("probe", "-boussinesq_advance_swap_policy", "adaptive", "-boussinesq_advance_swap_trust_lo", "1e9", "-boussinesq_advance_swap_trust_hi", "1e9", "-sim_t_end", f"{T0 + CALL:g}")
# the adaptive run with trust_hi at 1.5 x the first spread seen (the spread of a fresh history)
first = probe[4][0] if probe[4] else 0.05
lo, hi = first, 1.5 * first
res["adaptive"] = do("adaptive", "-boussinesq_advance_swap_policy", "adaptive", "-boussinesq_advance_swap_trust_lo", f"{lo:.4g}", "-boussinesq_advance_swap_trust_hi", f"{hi:.4g}")
for m in (8, 24):
    res[f"resync{m}"] = do(f"resync{m}", "-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "surrogate",
                           "-boussinesq_advance_resync_every", str(m))
tr, br = res["solver"][1], res["solver"][2]
test = tr > T0 + 1e-9


def pod_floor():
    """the RMS error of b when the solver-alone run is projected on the model's modes and reconstructed:
    what no 5-mode forecast can beat (each field scaled as the model scales it)"""
    with h5py.File(MODEL, "r") as m:
        modes, mean, fsc = m["modes"][()], m["mean"][()], np.ravel(m.attrs["fscale"])
        fl = m.attrs["fields"]
        fl = (fl.decode() if isinstance(fl, bytes) else str(fl)).split(",")
    with h5py.File(os.path.join(W, "solver.h5"), "r") as f:
        cols = []
        for c in fl:
            g = f["fields/" + c]
            cols.append(np.array([g[str(k)][()] for k in sorted(int(k) for k in g)]).reshape(len(tr), -1) / fsc[fl.index(c)])
    X = np.concatenate(cols, axis=1)
    R = (X - mean) @ modes.T @ modes + mean
    n, i = X.shape[1] // len(fl), fl.index("b")
    return np.sqrt(np.mean((R[:, i * n:(i + 1) * n] - X[:, i * n:(i + 1) * n]) ** 2, axis=1)) * fsc[i]


floor = pod_floor()
print(f"   POD floor of b (the solver-alone run on the model's modes): mean {floor[test].mean():.4f}, at t = {T1} {floor[-1]:.4f}")
print(f"== t = {T0} .. {T1} ({(T1 - T0) / CALL:g} calls of 8 snapshots); adaptive trust band [{lo:.3g}, {hi:.3g}]")
print(f"   variant     wall (s)  speed-up  solver calls  podlstm calls  RMS db vs solver: mean    at t = {T1}")
fig, ax = plt.subplots(figsize=(7, 4))
for name, (wall, t, b, cnt, _) in res.items():
    rms = np.sqrt(np.mean((b - br) ** 2, axis=(1, 2)))
    print(f"   {name:10s} {wall:9.1f}  {res['solver'][0] / wall:8.2f}  {cnt[0] - WARM:12d}  {cnt[1]:13d}  {rms[test].mean():22.4f}  {rms[-1]:10.4f}")
    if name != "solver":
        ax.plot(t[test], rms[test], "o-", ms=2, label=f"{name} (speed-up {res['solver'][0] / wall:.1f})")
ax.plot(tr[test], floor[test], "k--", lw=1, label="POD floor (the solver on the model's modes)")
ax.set_xlabel("free-fall time")
ax.set_ylabel("RMS of b - b(solver alone)")
ax.legend()
ax.set_title(f"POD-LSTM in for the Rayleigh-Benard solver (Ra {RA})")
plt.tight_layout()
plt.savefig(os.path.join(DOCS, PNG), dpi=90)
print(f"wrote {os.path.join(DOCS, PNG)}")
