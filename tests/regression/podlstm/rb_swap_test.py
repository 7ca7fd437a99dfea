#!/usr/bin/env python3
"""POD-LSTM serving physics/boussinesq's field.advance slot end to end, on the small field-slot case
(inputs/boussinesq/slots.yaml: Ra 1e5, 64 x 17 Chebyshev points, written on 64 x 16), ~20 s:

1. data: the deck's own trajectory (an ensemble of one member, the deck as written: t <= 4,
   snapshots every 0.25 on the output grid, uniform cell centres), a model of p, b, u, w with L = 2,
   K = 3 modes, the first 11 snapshots to train (the last 3 validate: 2 validation windows, the
   fewest for which validation R2 is defined), residual on a VAR (base: var; search none, one small
   network);
2. the slot in the loop (advance dt 0.25, 2 snapshots per call), the solver for the first 4 calls,
   then POD-LSTM (schedule policy): the counts in the report; the provider maps the solver's native
   grid (x_i = i Lx/nx, Chebyshev z) to the model's and back, and the solver continues from its
   answers -- every later diagnostic is finite, and at every output after the switch (t = 2.5 .. 4)
   the served forecast is closer to the solver alone than persistence (b frozen at t = 2, computed
   here) -- measured 0.0006 .. 0.0080 against 0.0036 .. 0.0245 RMS in b; a broken grid mapping would
   be O(0.01 - 1). Why this case and not the one this test used before: a model trained on another
   member of an ensemble (other initial noise) cannot beat persistence here -- this trajectory's
   distance from that member's 3 modes (0.015 - 0.037 in b) is already above persistence's error
   (0.004 - 0.025); and with 5 training windows no network learns anything (validation R2 -8.8:
   the network without a base ends as good as persistence), so the network forecasts the residual
   on the VAR and, not beating it on validation, stays at it (an untrained network is its base);
3. the same on 2 ranks: the same b to 1e-9 and the same counts;
4. re-synchronisation (advance warmup 2, resync_every 4, static policy: the surrogate whenever it may):
   the solver serves the 4 warm-up calls, then every third call (after 4 surrogate snapshots in a
   row) -- the pattern of the switch log and the counts (6 solver, 4 surrogate calls to t = 5); the
   run equals the schedule run until the first re-synchronisation; a restart from the checkpoint
   written at t = 3 (after 4 surrogate snapshots: the next call must be the solver's) ends with b
   equal bit for bit at every output after it and the same counts as the uninterrupted run;
5. the shipped model inputs/podlstm/models/rb4_podlstm.h5 in the shipped deck inputs/podlstm/rb_swap.yaml
   (96 x 25 points, warm-up and resync_every 24 as written), shortened (warm-up to t = 2, t_end 10: ~2 s):
   the model fits the deck's fields and grid, the counts (2 solver calls, 3 POD-LSTM calls: the
   re-synchronisation after 24 snapshots), every diagnostic finite; and the scores recorded in the
   model (its card, inputs/podlstm/models/README.md): the top-3 mean better than the hand LSTM and
   persistence in every field, every POD method at or above the floor less 0.5 % (VAR may dip under
   the floor of one field: the floor is optimal for the scaled sum of the fields);
6. the shipped Ra = 1e7 model inputs/podlstm/models/rb1e7_podlstm.h5 in inputs/podlstm/rb1e7_swap.yaml
   (128 x 49 points), shortened (warm-up to t = 8, t_end 40: ~5 s): counts 2 and 3 as in 5., every
   diagnostic finite; its recorded scores: the top-3 mean better than the hand LSTM and persistence
   in every field and than the VAR in b and u (the card's claim), every method at or above the floor
   less 0.5 %."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import check, deck, surge, workdir  # noqa: E402

w = workdir("podlstm_rb_swap")
S = deck("boussinesq/slots.yaml")
with open(os.path.join(w, "ens.yaml"), "w") as f:  # one member: the deck as written (noise varied from 0.1 to 0.1: its own value)
    f.write(open(S).read() + "ensemble: {members: 1, sampler: uniform, vary: [boussinesq_noise], lower: [0.1], upper: [0.1], output: rb, contribute: fields, fields: [p, b, u, w]}\n")
surge(["ensemble", "ens.yaml", "-sim_t_end", "4", "-sim_field_every", "32"], w)
with open(os.path.join(w, "train.yaml"), "w") as f:
    f.write("train: {surrogate: podlstm, output: rbm}\n"
            "podlstm: {data: [rb.h5], fields: [p, b, u, w], skip: 0, ntrain: 11, ntest: 6, valid_fraction: 0.3, modes: 3, window: 2,\n"
            "          search: none, arch: L8, base: var, epochs: 30, patience: 30, batch_size: 4, baselines: false, prefix: rbm}\n")
surge(["train", "train.yaml"], w)
args = ["run", S, "-sim_t_end", "4", "-sim_field_every", "1", "-boussinesq_advance_dt", "0.25", "-boussinesq_advance_snapshots", "2",
        "-boussinesq_advance_surrogate", "podlstm", "-boussinesq_podlstm_model", "rbm.h5"]
surge(args + ["-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "solver", "-sim_output", "ref"], w)
_, out = surge(args + ["-boussinesq_advance_swap_policy", "schedule", "-boussinesq_advance_swap_step", "4", "-sim_output", "sw1"], w)
_, out2 = surge(args + ["-boussinesq_advance_swap_policy", "schedule", "-boussinesq_advance_swap_step", "4", "-sim_output", "sw2"], w, ranks=2)


def read(name):
    with h5py.File(os.path.join(w, name + ".h5"), "r") as f:
        g = f["fields/b"]
        b = np.array([g[str(k)][()] for k in sorted(int(k) for k in g)])
        d = {k: f["diagnostics"][k][()] for k in f["diagnostics"]}
        cnt = (int(f["report/advance_solver_calls"][()][0]), int(f["report/advance_surrogate_calls"][()][0]))
    return b, d, cnt


br, dr, cr = read("ref")
b1, d1, c1 = read("sw1")
b2, d2, c2 = read("sw2")
check(cr == (8, 0) and c1 == (4, 4), f"counts: the solver alone 8 calls; the swap: solver {c1[0]}, podlstm {c1[1]}")
check(all(np.all(np.isfinite(v)) for v in d1.values()), "every diagnostic of the swapped run is finite")
rms = np.sqrt(np.mean((b1 - br) ** 2, axis=(1, 2)))
with h5py.File(os.path.join(w, "ref.h5"), "r") as f:  # output times (every 0.5: one per slot call)
    t_ref = np.array([f["fields/b"][str(k)].attrs["time"] for k in sorted(int(k) for k in f["fields/b"])]).ravel()
swapped = t_ref > 2 + 1e-12
persist = np.sqrt(np.mean((br - br[np.argmin(np.abs(t_ref - 2))]) ** 2, axis=(1, 2)))  # b frozen at the switch, t = 2
check(np.all(rms[~swapped] == 0) and np.all(rms[swapped] > 0), f"the swapped run equals the solver alone until t = 2 and differs after ({rms.round(4).tolist()})")
check(np.all(rms[swapped] < persist[swapped]), f"the served forecast beats persistence at every output after the switch: RMS in b {rms[swapped].round(4).tolist()} against {persist[swapped].round(4).tolist()}")
check(np.max(np.abs(b2 - b1)) < 1e-9 and c2 == c1, f"2 ranks: the same b (max |db| {np.max(np.abs(b2 - b1)):.1e}) and counts")

# 4. re-synchronisation every 4 snapshots, and a restart in the middle of it
rs = args + ["-sim_t_end", "5", "-boussinesq_advance_swap_policy", "static", "-boussinesq_advance_swap_use", "surrogate",
             "-boussinesq_advance_warmup", "2", "-boussinesq_advance_resync_every", "4"]
_, out3 = surge(rs + ["-sim_output", "rs"], w)
log = [ln for ln in out3.splitlines() if ln.startswith("field.advance: step")]
steps = [int(ln.split()[2].rstrip(":")) for ln in log]
check(steps == [4, 6, 7, 9] and all("re-synchronisation after 4 snapshots of podlstm" in log[i] for i in (1, 3)),
      "switch log: surrogate at call 4, the solver (re-synchronisation) at calls 6 and 9: " + " | ".join(ln[:60] for ln in log))
b3, d3, c3 = read("rs")
check(c3 == (6, 4), f"counts with resync_every 4: solver {c3[0]}, podlstm {c3[1]} (expected 6, 4)")
check(np.array_equal(b3[:7], b1[:7]) and not np.array_equal(b3[7], b1[7]), "the same as the schedule run until the first re-synchronisation (t = 3), not after it")
surge(rs + ["-sim_output", "rsh", "-sim_t_end", "3"], w)
surge(rs + ["-sim_output", "rsh", "-restart", "rsh.chk.h5"], w)
bh, dh, ch = read("rsh")
check(bh.shape == b3.shape and np.array_equal(bh, b3) and ch == c3, f"restart at t = 3 mid-swap: b bit for bit at all {len(bh)} outputs (max |db| {np.max(np.abs(bh - b3)):.1e}), counts {ch}")

# 5. the shipped model and deck
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_, out5 = surge(["run", deck("podlstm/rb_swap.yaml"), "-sim_output", "shipped", "-sim_t_end", "10", "-boussinesq_advance_warmup", "2",
                 "-boussinesq_podlstm_model", os.path.join(ROOT, "inputs", "podlstm", "models", "rb4_podlstm.h5")], w)
_, d5, c5 = read("shipped")
check(c5 == (2, 3), f"shipped deck and model: solver {c5[0]}, podlstm {c5[1]} calls (expected 2, 3: warm-up, 3 calls, re-synchronisation)")
check(all(np.all(np.isfinite(v)) for v in d5.values()), "shipped deck and model: every diagnostic finite")


def scores(model):
    with h5py.File(os.path.join(ROOT, "inputs", "podlstm", "models", model), "r") as f:
        meth = f["scores"].attrs["methods"]
        meth = (meth.decode() if isinstance(meth, bytes) else str(meth)).split(";")
        rm = dict(zip(meth, f["scores/rmse"][()]))
    print(f"shipped model {model} scores:", {k: np.round(v, 5).tolist() for k, v in rm.items()})
    pick = {key: next(k for k in meth if any(w in k for w in words)) for key, words in
            (("top", ["mean"]), ("hand", ["hand"]), ("floor", ["truth", "floor"]), ("per", ["persist"]), ("var", ["VAR"]))}
    return rm, pick


rm, k = scores("rb4_podlstm.h5")
check(np.all(rm[k["top"]] < rm[k["hand"]]) and np.all(rm[k["top"]] < rm[k["per"]]), f"shipped model: top-3 mean {rm[k['top']]} below the hand LSTM {rm[k['hand']]} and persistence in every field")
check(all(np.all(v >= 0.995 * rm[k["floor"]]) for v in rm.values()), "shipped model: every method at or above the POD floor (less 0.5 %)")
# 6. the Ra = 1e7 model and deck
_, out6 = surge(["run", deck("podlstm/rb1e7_swap.yaml"), "-sim_output", "shipped7", "-sim_t_end", "40", "-boussinesq_advance_warmup", "8",
                 "-boussinesq_podlstm_model", os.path.join(ROOT, "inputs", "podlstm", "models", "rb1e7_podlstm.h5")], w)
_, d6, c6 = read("shipped7")
check(c6 == (2, 3), f"shipped Ra 1e7 deck and model: solver {c6[0]}, podlstm {c6[1]} calls (expected 2, 3)")
check(all(np.all(np.isfinite(v)) for v in d6.values()), "shipped Ra 1e7 deck and model: every diagnostic finite")
rm, k = scores("rb1e7_podlstm.h5")
fields = ["p", "b", "u", "w"]
check(np.all(rm[k["top"]] < rm[k["hand"]]) and np.all(rm[k["top"]] < rm[k["per"]]), f"Ra 1e7 model: top-3 mean {rm[k['top']]} below the hand LSTM {rm[k['hand']]} and persistence in every field")
check(all(rm[k["top"]][fields.index(c)] < rm[k["var"]][fields.index(c)] for c in "bu"), f"Ra 1e7 model: top-3 mean below the VAR in b and u ({rm[k['top']]} vs {rm[k['var']]})")
check(all(np.all(v >= 0.995 * rm[k["floor"]]) for v in rm.values()), "Ra 1e7 model: every method at or above the POD floor (less 0.5 %)")
print("podlstm boussinesq swap checks passed")
