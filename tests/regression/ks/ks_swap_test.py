#!/usr/bin/env python3
"""physics/ks: ensembles over initial seeds and the field.advance slot (docs/ks.md), ~20 s of CPU, 1-2 min on the loaded machine:

1. `surge ensemble` with seed_option ks_seed: two members (L = 22, u every 3 time units to t = 2400)
   whose trajectories differ; member 1 equals `surge run -ks_seed S` bit for bit at every snapshot, S
   being the seed its checkpoint names (layout ks_seed) -- the member is the plain run of its seed;
2. the field.advance slot in the loop (advance dt 3, 2 snapshots a call, to t = 600), the solver serving: every
   snapshot equals member 0's bit for bit (the provider takes the ETDRK4 steps of the plain run), on 1
   and 2 ranks; a run stopped at t = 300 (the last call shortened) and restarted (the slot's history is
   checkpointed) equals it bit for bit;
3. POD-LSTM in the slot: a model of member 0 (8 POD modes, 2 snapshots in -> 2 out, a small network
   on the VAR's residual: what a 10-epoch training allows), served by the schedule policy for one call
   after c = 300, 302, .., 396 solver calls (t = 1800 .. 2376, the model's test period): the counts
   (c solver calls, 1 POD-LSTM call), every diagnostic finite, and the served u 6 time units (0.28
   Lyapunov times) after the switch closer to the solver alone than persistence (u frozen at the
   switch): mean over the 49 switch points below 0.9 x persistence's (measured 0.839 against 1.034;
   0.856 against 1.035 in the ASan build, whose -O1 rounding takes the chaotic trajectory elsewhere --
   with 8 points, 48 time units apart, that build measured 1.025 against 0.909 and failed by chance), and
   within 20 % of the model's own test RMSE at lead 2 stored by surge train (0.890; 0.919 ASan);
4. exactly what is served: a model whose 1-epoch networks lose to the VAR on validation serves its
   fallback VAR (fallback: baseline); after the switch at call 332 the written u (2 snapshots on)
   equals numpy's iteration of that VAR from member 0's coefficients (the model's mean, modes and
   scale) to 1e-10 relative (measured 6e-16): the provider hands the model its own grid (the cells
   centred on x_j = j L / N; a half-cell shift gives 3.8e-2) and the state continues from the call's
   last snapshot (importing the first gives 3.4e-1)."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import check, deck, diagnostics, last_field, surge, workdir  # noqa: E402

w = workdir("ks_swap")
D = deck("ks/ks22.yaml")
Q = ["-ks_lyapunov", "false", "-sim_progress_every", "100000000"]


def fields(path):
    with h5py.File(os.path.join(w, path), "r") as f:
        g = f["fields/u"]
        return {round(float(g[k].attrs["time"]), 9): g[k][()] for k in g}


# 1. the ensemble
with open(os.path.join(w, "ens.yaml"), "w") as f:
    f.write(open(D).read() + "ensemble: {members: 2, sampler: uniform, seed: 4, seed_option: ks_seed, output: ks, contribute: fields, fields: [u]}\n")
surge(["ensemble", "ens.yaml", "-sim_t_end", "2400", "-sim_field_every", "12"] + Q, w)
seeds = []
for m in range(2):
    with h5py.File(os.path.join(w, "ks.members", f"member_{m:05d}.chk.h5"), "r") as f:
        seeds.append(int(f["layout"].attrs["ks_seed"]))
m0, m1 = fields("ks.members/member_00000.h5"), fields("ks.members/member_00001.h5")
check(len(m0) == 801 and seeds[0] != seeds[1] and seeds[0] > 0, f"two members of 801 snapshots with seeds {seeds}")
check(np.sqrt(np.mean((m0[2400.0] - m1[2400.0]) ** 2)) > 0.3, "the members' trajectories differ")
surge(["run", D, "-sim_t_end", "2400", "-sim_field_every", "12", "-ks_seed", str(seeds[1]), "-sim_output", "run1"] + Q, w)
r1 = fields("run1.h5")
check(sorted(r1) == sorted(m1) and all(np.array_equal(r1[t], m1[t]) for t in r1), "member 1 equals surge run -ks_seed S bit for bit at every snapshot")

# 2. the slot, the solver serving
A = ["-ks_seed", str(seeds[0]), "-ks_advance_dt", "3", "-ks_advance_snapshots", "2", "-sim_field_every", "1"]
surge(["run", D, "-sim_t_end", "600", "-sim_output", "adv"] + A + Q, w)
surge(["run", D, "-sim_t_end", "600", "-sim_output", "adv2"] + A + Q, w, ranks=2)
surge(["run", D, "-sim_t_end", "300", "-sim_output", "part"] + A + Q, w)
surge(["run", D, "-sim_t_end", "600", "-sim_output", "part", "-restart", "part.chk.h5"] + A + Q, w)
a, a2, pr = fields("adv.h5"), fields("adv2.h5"), fields("part.h5")
check(len(a) == 101 and all(np.array_equal(a[t], m0[t]) for t in a), f"the solver-served slot: u at its {len(a)} outputs equals member 0 bit for bit")
check(all(np.array_equal(a[t], a2[t]) for t in a), "the slot: 1 and 2 ranks identical")
check(600.0 in pr and all(np.array_equal(m0[t], pr[t]) for t in pr), "the slot: a run to t = 300 (its last call shortened to 1 snapshot) restarted to 600 equals member 0 bit for bit at its every output")

# 3. POD-LSTM serving the slot
with open(os.path.join(w, "train.yaml"), "w") as f:
    f.write("train: {surrogate: podlstm, output: ksm}\n"
            "podlstm: {data: [ks.h5], fields: [u], member: 0, skip: 50, ntrain: 550, ntest: 150, modes: 8, window: 2,\n"
            "          search: none, arch: L16, base: var, epochs: 10, patience: 10, baselines: true, prefix: ksm}\n")
_, out = surge(["train", "train.yaml"], w)
with h5py.File(os.path.join(w, "ksm.h5"), "r") as f:
    names = f["scores"].attrs["methods"]
    names = (names.decode() if isinstance(names, bytes) else str(names)).split(";")
    stored = f["scores/rmse_lead"][()][names.index("POD-LSTM"), 0, 1]  # its test RMSE 2 snapshots ahead
print("\n".join(line for line in out.splitlines() if "lead" in line or "   " in line)[-1500:])
S = ["-ks_seed", str(seeds[0]), "-ks_advance_dt", "3", "-ks_advance_snapshots", "2", "-sim_field_every", "100000",
     "-ks_advance_surrogate", "podlstm", "-ks_podlstm_model", "ksm.h5", "-ks_advance_swap_policy", "schedule"]
E, P = [], []
for c in range(300, 398, 2):  # one POD-LSTM call after c solver calls (t = 6c: the test period starts at 1800)
    surge(["run", D, "-sim_output", f"swap{c}", "-sim_t_end", str(6 * (c + 1)), "-ks_advance_swap_step", str(c)] + S + Q, w)
    with h5py.File(os.path.join(w, f"swap{c}.h5"), "r") as f:
        cnt = (int(f["report/advance_solver_calls"][()][0]), int(f["report/advance_surrogate_calls"][()][0]))
    check(cnt == (c, 1), f"switch after {c} calls: counts solver {cnt[0]}, podlstm {cnt[1]}")
    check(all(np.all(np.isfinite(v)) for v in diagnostics(os.path.join(w, f"swap{c}.h5")).values()), "every diagnostic finite")
    u, t0 = last_field(os.path.join(w, f"swap{c}.h5"), "u"), 6.0 * c
    E.append(np.sqrt(np.mean((u - m0[t0 + 6]) ** 2)))
    P.append(np.sqrt(np.mean((m0[t0] - m0[t0 + 6]) ** 2)))
E, P = np.array(E), np.array(P)
print("POD-LSTM served, 6 time units ahead:", np.round(E, 3), "persistence:", np.round(P, 3))
check(np.mean(E) < 0.9 * np.mean(P), f"the served forecast 6 time units ahead (0.28 Lyapunov times), mean over {len(E)} switch points: {np.mean(E):.3f} against persistence's {np.mean(P):.3f} (< 0.9x)")
check(abs(np.mean(E) / stored - 1) < 0.2, f"... and within 20 % of the model's own test RMSE at lead 2 over its 149 test windows ({stored:.3f})")

# 4. exactly what is served: a model whose networks (1 epoch) lose to the VAR on validation serves its
# fallback VAR (fallback: baseline); numpy iterates that VAR from the coefficients of member 0's u at
# the switch and 3 time units before, with the model's mean, modes and field scale, and reconstructs
_, out = surge(["train", "train.yaml", "-podlstm_base", "none", "-podlstm_epochs", "1", "-podlstm_fallback", "baseline",
                "-podlstm_baselines", "false", "-train_output", "ksv", "-podlstm_prefix", "ksv"], w)
check(any("fallback: the model serves VAR(" in ln for ln in out.splitlines()), "the 1-epoch network loses to the VAR on validation: the model serves its VAR")
with h5py.File(os.path.join(w, "ksv.h5"), "r") as f:
    mean, modes, scale = f["mean"][()], f["modes"][()], float(f.attrs["fscale"][0])
    Wf, p = f["fallback_var"][()], int(f["fallback_var"].attrs["var_order"])
c = 332
surge(["run", D, "-sim_output", "swapv", "-sim_t_end", str(6 * (c + 1)), "-ks_advance_swap_step", str(c), "-ks_podlstm_model", "ksv.h5"] + S[:-4] + S[-2:] + Q, w)
t0 = 6.0 * c
hist = [modes @ (m0[t0 - 3 * j] / scale - mean) for j in range(max(p, 2) - 1, -1, -1)]
for lead in range(2):
    hist.append(Wf @ np.r_[1.0, np.concatenate([hist[-j] for j in range(1, p + 1)])])
ref = scale * (mean + modes.T @ hist[-1])
u = last_field(os.path.join(w, "swapv.h5"), "u")
dev = np.max(np.abs(u - ref)) / np.max(np.abs(ref))
check(dev < 1e-10, f"the served u 2 snapshots after the switch is numpy's VAR({p}) forecast through the model's POD, the state continuing from the last snapshot: max rel. difference {dev:.1e} < 1e-10")
