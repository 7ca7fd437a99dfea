#!/usr/bin/env python3
"""surge train with podlstm on the small SST data (inputs/podlstm/sst_small.yaml), ~40 s:

1. a random search of 6 candidates on 1 rank: the model file holds 6 evaluations (ids 0..5) and the
   scores; numpy's SVD of the same training snapshots gives the singular values the model stores to
   1e-9 relative and the same modes (|cos| > 1 - 1e-9); persistence and climatology test RMSE
   recomputed by numpy equal surge's to 1e-9 relative; the VAR baseline of the order surge chose,
   refitted by numpy least squares on numpy's coefficients and iterated, gives surge's RMSE to 1e-6;
   every POD-based method's RMSE is at least the POD floor (errors are orthogonal to the modes);
   its field.advance provider through the slot API (test_podlstm advance: equal to the model's own
   forecast, the adaptive policy with the surrogate held back every third call) gives the same
   forecasts on 1 and 2 ranks (checksum to 1e-10);
2. the same run (search none) on 1 and 2 ranks: POD floor, persistence, climatology and VAR scores
   equal to 1e-12 relative (projection and reconstruction in parallel; sums in another order;
   measured <= 6.5e-14), the networks' to 1e-13 (measured 2.1e-15 and 2.6e-15: the windows differ by
   round-off only, and 10 epochs do not amplify it measurably);
3. kill -9 of a 2-rank aging search after >= 3 logged candidates, then the same command again: it
   resumes (says so), ends with exactly the budget of evaluations, unique ids, the entries logged
   before the kill unchanged; a different search on the same log is refused;
4. refused decks: missing data, unknown field, bad architecture, too few snapshots, a rollout longer
   than the fitting period holds, a rollout that leaves fewer than 2 validation windows: one
   "surge: error:" line, exit 1, no model file;
4c. the learning-rate schedules: cosine (to lr_min at the last epoch) and exp (a staircase) print the
   rate the formula gives at each epoch's last step; their rollout-2 training windows hold the next 2 L
   steps (the inputs of the windows L and 2 L later);
5. residual networks (base: var; the first with input_noise: 0.1, its first-epoch loss at lr 1e-8 is
   within 4 standard deviations of the expectation of the noisy targets, the clean residual plus the
   scaled VAR's response G n to the noise, and more than 4 from the clean residual's): the model
   file's var_weights equal numpy's least-squares VAR of the
   stored order fitted on the training period less its validation part (1e-8 relative); a network
   trained one epoch at learning rate 1e-8 forecasts the test period as that VAR does (numpy's RMSE
   to 1e-6: the output layer starts at zero, the base is added in scaled units and unscaled); the
   field.advance provider of a searched residual model gives the same forecasts on 1 and 2 ranks;
   with rollout: 2 the first epoch's training loss of such a network (lr 1e-8: still zero) is the
   VAR's own two-window rollout error, recomputed by numpy from the stored windows, var_weights, lo and
   hi (to 2e-4: the loss is printed with 5 digits) -- the base is applied to the fed-back forecast --
   and its validation R2 that of the same 2-window rollout over the validation windows (2e-6
   relative: printed with 5 decimals, measured 7e-7), the measure early stopping keeps the best
   weights by;
5c. residual networks on the quadratic regression (base: quadratic) with rollout: 2 at lr 1e-8: the
   lags and ridge surge chose are numpy's choice on the validation windows, var_weights equal numpy's
   ridge regression (1e-8 relative), the first epoch's loss is the base's 2-window rollout error from
   the stored windows (2e-4: 5 printed digits; the base iterated on the tape in scaled coefficients)
   and the test RMSE numpy's quadratic forecast's (1e-6 relative); too few fitting snapshots for its
   regressors is one "surge: error:" line (section 4);
5d. model selection by free runs (free_run: 40) of a linear network (arch I) trained 20 epochs: surge
   passes over epochs of a better validation R2 and keeps a staying one; numpy rebuilds it (test RMSE
   to 1e-9), iterates it from the same 4 starts and finds its runs on the attractor by the same test;
6. the fallback: networks trained one epoch lose to the VAR on the validation windows; surge train
   says so in one line (served anyway without fallback, no fallback VAR in the file); with
   fallback: baseline the line says the VAR serves, the file's fallback_var equals numpy's least
   squares of the printed order on the whole training period (1e-8 relative), and the field.advance
   provider serves numpy's VAR forecast of the last training window (weighted checksum to 1e-9)."""
import glob
import os
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import MPIEXEC, ROOT, SURGE, check, deck, fail, kill_job, surge, workdir  # noqa: E402

w = workdir("podlstm_train")
surge(["ensemble", deck("sst/ensemble_small.yaml")], w)
D = deck("podlstm/sst_small.yaml")
SKIP, NTRAIN, NTEST, K, L, YEAR = 5, 100, 52, 5, 8, 365.25


def scores(path):
    with h5py.File(path, "r") as f:
        names = f["scores"].attrs["methods"].decode().split(";") if isinstance(f["scores"].attrs["methods"], bytes) else f["scores"].attrs["methods"].split(";")
        return dict(zip(names, f["scores/rmse"][:, 0]))


# 1. random search on 1 rank, checked against numpy
_, out = surge(["train", D, "-podlstm_search", "random", "-train_output", "m1", "-podlstm_prefix", "r1"], w)
with h5py.File(os.path.join(w, "m1.h5"), "r") as f:
    sigma = f.attrs["sigma"][:]
    modes = f["modes"][:]
    ev = f["search/evals"][:]
check(ev.shape[0] == 6 and sorted(ev[:, 0]) == list(range(6)), f"the model records 6 evaluations with ids 0..5 ({ev[:, 0]})")
with h5py.File(os.path.join(w, "sst_small.h5"), "r") as f:
    n = int(f.attrs["nsamples"])
    mem = f["samples/member"][:n]
    X = f["samples/T"][:n][mem == 0].reshape(int(np.sum(mem == 0)), -1)[SKIP:SKIP + NTRAIN + NTEST]
    t = f["samples/time"][:n][mem == 0][SKIP:SKIP + NTRAIN + NTEST]
mean = X[:NTRAIN].mean(0)
U, S, Vt = np.linalg.svd((X[:NTRAIN] - mean).T, full_matrices=False)
check(np.max(np.abs(sigma - S[:K]) / S[:K]) < 1e-9, f"singular values equal numpy's SVD (max rel. diff {np.max(np.abs(sigma - S[:K]) / S[:K]):.1e})")
cosv = np.abs(np.sum(modes * U[:, :K].T, axis=1))
check(np.min(cosv) > 1 - 1e-9, f"modes parallel to numpy's (min |cos| {np.min(cosv):.12f})")
active = X[:NTRAIN].max(0) > X[:NTRAIN].min(0)
te0 = NTRAIN - L
nte = NTEST - L + 1
sc = scores(os.path.join(w, "m1.h5"))


def rmse(pred_of):
    e = 0.0
    for wdw in range(nte):
        s = te0 + wdw
        for lead in range(L):
            d = pred_of(s, lead) - X[s + L + lead]
            e += np.sum(d[active] ** 2)
    return np.sqrt(e / (active.sum() * nte * L))


per = rmse(lambda s, lead: X[s + L - 1])
nb = int(round(YEAR / 7.0))
binof = lambda tt: int(np.floor(np.fmod(tt, YEAR) / YEAR * nb + 0.5)) % nb  # noqa: E731
clim = np.zeros((nb, X.shape[1]))
cnt = np.zeros(nb)
for j in range(NTRAIN):
    clim[binof(t[j])] += X[j]
    cnt[binof(t[j])] += 1
for b in range(nb):
    if cnt[b]:
        clim[b] /= cnt[b]
for b in range(nb):
    d = 1
    while not cnt[b] and d <= nb // 2:
        src = (b + d) % nb if cnt[(b + d) % nb] else ((b - d) % nb if cnt[(b - d) % nb] else -1)
        if src >= 0:
            clim[b] = clim[src]
            break
        d += 1
cl = rmse(lambda s, lead: clim[binof(t[s + L + lead])])
check(abs(per - sc["persistence"]) < 1e-9 * per, f"persistence RMSE {sc['persistence']:.10f} equals numpy's {per:.10f}")
check(abs(cl - sc["climatology"]) < 1e-9 * cl, f"climatology RMSE {sc['climatology']:.10f} equals numpy's {cl:.10f}")
# VAR of the order surge chose, by numpy least squares on numpy's coefficients
var_name = [m for m in sc if m.startswith("VAR(")][0]
p = int(var_name[4:var_name.index(")")])
Ug = U[:, :K] * np.sign(U[:, :K].sum(0))  # the sign convention of the model's modes
a = (X - mean) @ Ug


def var_fit(p, nrows):
    """least squares of a_t on [1, a_{t-1} .. a_{t-p}] for t in [p, nrows), surge's regularisation"""
    G = np.array([np.r_[1.0, np.concatenate([a[tt - j] for j in range(1, p + 1)])] for tt in range(p, nrows)])
    return np.linalg.solve(G.T @ G + 1e-12 * np.trace(G.T @ G) / G.shape[1] * np.eye(G.shape[1]), G.T @ a[p:nrows])


def var_forecasts(W, p):
    """the VAR iterated L steps from every test window's L true coefficients, reconstructed"""
    out = {}
    for wdw in range(nte):
        s = te0 + wdw
        hist = list(a[s:s + L])
        for lead in range(L):
            hist.append(np.r_[1.0, np.concatenate([hist[-j] for j in range(1, p + 1)])] @ W)
            out[(s, lead)] = mean + Ug @ hist[-1]
    return out


def advance_checksums(model):
    """the model's field.advance provider through the slot API (test_podlstm advance) on 1 and 2 ranks"""
    sums = []
    for ranks in (1, 2):
        cmd = ([*MPIEXEC] if ranks == 2 else []) + [os.path.join(ROOT, "build", "tests", "test_podlstm"), "advance", model, "sst_small.h5", "T", str(SKIP), str(NTRAIN)]
        r = subprocess.run(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        print(r.stdout)
        if r.returncode:
            fail(f"test_podlstm advance of {model} on {ranks} rank(s) failed")
        sums.append(float([ln for ln in r.stdout.splitlines() if "checksum" in ln][0].split()[-1]))
    return sums


fc = var_forecasts(var_fit(p, NTRAIN), p)
vr = rmse(lambda s, lead: fc[(s, lead)])
check(abs(vr - sc[var_name]) < 1e-6 * vr, f"{var_name} RMSE {sc[var_name]:.10f} equals numpy's refit {vr:.10f}")
floor = sc["POD truth (the floor)"]
pod_methods = [m for m in sc if m.startswith("POD-LSTM") or m.startswith("hand") or m.startswith("VAR")]
check(all(sc[m] >= floor * (1 - 1e-12) for m in pod_methods), f"every POD-based RMSE >= the floor {floor:.5f}: " + ", ".join(f"{m} {sc[m]:.4f}" for m in pod_methods))

# 1b. the field.advance provider of this model, driven through the slot API (1 and 2 ranks)
adv = advance_checksums("m1.h5")
check(abs(adv[0] - adv[1]) <= 1e-10 * abs(adv[0]), f"field.advance through the slot: the same forecasts on 1 and 2 ranks (checksums {adv[0]:.12e}, {adv[1]:.12e})")

# 2. 1 vs 2 ranks
args = ["train", D, "-podlstm_search", "none", "-podlstm_arch", "L16 I+1", "-podlstm_epochs", "10"]
surge(args + ["-train_output", "one", "-podlstm_prefix", "one"], w)
surge(args + ["-train_output", "two", "-podlstm_prefix", "two"], w, ranks=2)
s1, s2 = scores(os.path.join(w, "one.h5")), scores(os.path.join(w, "two.h5"))
for m in s1:
    # the networks: each trains on one rank from the same seed, on windows equal to round-off (the
    # projection's allreduce), and 10 epochs do not amplify it measurably (2.1e-15, 2.6e-15); the
    # rest: sums over the rows in another order (VAR 6.5e-14: its least squares amplifies them)
    tol = 1e-13 if m.startswith("POD-LSTM") or m.startswith("hand") else 1e-12
    rel = abs(s1[m] - s2[m]) / s1[m]
    check(rel < tol, f"1 vs 2 ranks, {m}: {s1[m]:.12f} vs {s2[m]:.12f} (rel. {rel:.1e} < {tol:.0e})")

# 2b. issue 38: the trainer's ZeRO stage through the podlstm block. Each network trains on one rank
# (COMM_SELF), where stage 3 is the same update of the one block: the same scores bit for bit. Stage 3
# by buckets of 64 bytes (each of the LSTM's tensors a bucket: its cell reads W_ih, W_hh and the bias
# in one op, the most buckets in use at once, zero3b.c), so -podlstm_shard_bucket_bytes must reach the
# trainer (an unknown option is refused; the gradient is by buckets too, zerograd.c); and the stage
# reaches the trainer (stage 1 with plain SGD, which keeps no state, refused in one line; buckets at
# stage 1, which has no partitioned gradient or parameters, refused in one line)
surge(args + ["-train_output", "z3", "-podlstm_prefix", "z3", "-podlstm_shard", "3", "-podlstm_shard_bucket_bytes", "64"], w, ranks=2)
sz = scores(os.path.join(w, "z3.h5"))
for m in s2:
    check(sz[m] == s2[m], f"-podlstm_shard 3 by buckets of 64 bytes vs stage 0 on 2 ranks, {m}: {sz[m]:.15f} vs {s2[m]:.15f} (equal)")
rc, out = surge(args + ["-train_output", "zs", "-podlstm_prefix", "zs", "-podlstm_shard", "1", "-podlstm_optimizer", "sgd"], w, expect_ok=False)
zl = [ln for ln in out.splitlines() if ln.startswith("surge: error:")]
check(rc != 0 and len(zl) == 1 and "-podlstm_shard 1" in zl[0] and "SGD" in zl[0], f"-podlstm_shard 1 with plain SGD: one line naming the option ({zl})")
rc, out = surge(args + ["-train_output", "zb", "-podlstm_prefix", "zb", "-podlstm_shard", "1", "-podlstm_shard_bucket_bytes", "64"], w, expect_ok=False)
zl = [ln for ln in out.splitlines() if ln.startswith("surge: error:")]
check(rc != 0 and len(zl) == 1 and "-podlstm_shard_bucket_bytes 64" in zl[0] and "-podlstm_shard 1" in zl[0], f"buckets at stage 1: refused by the trainer in one line naming both options ({zl})")

# 3. kill -9 and resume
cmd = [*MPIEXEC, SURGE, "train", D, "-podlstm_search", "aging", "-podlstm_evaluations", "40", "-podlstm_epochs", "60", "-podlstm_patience", "60", "-podlstm_prefix", "k9", "-train_output", "k9", "-podlstm_baselines", "0"]
logs = os.path.join(w, "k9.search")


def logged():
    out = []
    for fn in sorted(glob.glob(os.path.join(logs, "rank_*.h5"))):
        try:
            with h5py.File(fn, "r") as f:
                m = int(f.attrs["nsamples"])
                out += [(int(i), float(r)) for i, r in zip(f["samples/id"][:m], f["samples/r2"][:m])]
        except (OSError, KeyError):
            pass  # being written right now
    return sorted(out)


p = subprocess.Popen(cmd, cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
t0 = time.time()
while len(logged()) < 3 and p.poll() is None and time.time() - t0 < 120:
    time.sleep(0.05)
if p.poll() is not None:
    fail(f"the search ended before it could be killed:\n{p.stdout.read().decode()[-2000:]}")
kill_job(p)
before = logged()
check(3 <= len(before) < 40, f"killed with kill -9 after {len(before)} logged evaluations")
_, out = surge(cmd[len(MPIEXEC) + 1:], w, ranks=2)
check("resuming from" in out, "the second run resumes from the log")
after = logged()
ids = [i for i, _ in after]
check(len(after) == 40 and len(set(ids)) == 40, f"the search ends with the budget: {len(after)} evaluations, {len(set(ids))} distinct ids")
check(all(e in after for e in before), "every evaluation logged before the kill is unchanged")
rc, out = surge(cmd[len(MPIEXEC) + 1:] + ["-podlstm_seed", "9"], w, ranks=1, expect_ok=False)
check(rc == 1 and "belongs to another search" in out, "a different search on the same log is refused")
# The log's fingerprint holds the effective configuration (issue 33): a command-line-only change that
# the search's summary does not show, and the data changed in place (same shape), are refused too.
rc, out = surge(cmd[len(MPIEXEC) + 1:] + ["-podlstm_valid_fraction", "0.3"], w, ranks=1, expect_ok=False)
check(rc == 1 and "belongs to another search" in out, "a search with another -podlstm_valid_fraction on the same log is refused")
data = os.path.join(w, "sst_small.h5")
with open(data, "rb") as f:
    kept = f.read()
with h5py.File(data, "r+") as f:
    x = f["samples/T"][3]
    x.flat[7] += 1e-3
    f["samples/T"][3] = x
rc, out = surge(cmd[len(MPIEXEC) + 1:], w, ranks=1, expect_ok=False)
check(rc == 1 and "belongs to another search" in out, "the same command over data changed in place (same shape) is refused")
with open(data, "wb") as f:
    f.write(kept)

# 4. refused decks
for extra, want in [(["-podlstm_data", "nothere.h5"], "nothere.h5"), (["-podlstm_fields", "S"], "has no field 'S'"),
                    (["-podlstm_search", "none", "-podlstm_arch", "L64 Q"], "neither I (identity) nor L<units>"),
                    (["-podlstm_ntrain", "400"], "lower them"),
                    (["-podlstm_rollout", "10"], "rollout 10 needs 88 fitting snapshots for one training window (have 80)"),
                    (["-podlstm_rollout", "3"], "rollout 3 leaves -3 validation windows of 32 steps (need 2; they validate the rollout)"),
                    (["-podlstm_base", "quadratic", "-podlstm_modes", "8"], "base quadratic has at least 45 regressors per coefficient (1 + pK + K(K+1)/2, K = 8 modes, p = 1 lag) but only 80 fitting snapshots"),
                    # on these 80 fitting weeks every quadratic regression's own iteration diverges or decays (its
                    # products have no seasonal forcing): the free-run check must refuse them all
                    (["-podlstm_base", "quadratic", "-podlstm_quad_free_run", "40"], "lags and ridges keeps a free run of 40 snapshots on the training attractor (bounded, not collapsed)")]:
    rc, out = surge(["train", D, "-train_output", "bad"] + extra, w, expect_ok=False)
    lines = [ln for ln in out.splitlines() if ln.startswith("surge: error:")]
    check(rc == 1 and len(lines) == 1 and want in lines[0] and "PETSC ERROR" not in out, f"refused {' '.join(extra)}: {lines[0][:120] if lines else out[-300:]}")
    check(not os.path.exists(os.path.join(w, "bad.h5")), "no model file written")

# 4c. the learning-rate schedules (-podlstm_lr_schedule): the rate printed at the end of each epoch is the
# schedule's at the epoch's last step (4 printed digits: 1e-3 relative); 57 windows / 32 = 2 steps an epoch
import math  # noqa: E402
for sched, extra, rate in [("cosine", ["-podlstm_lr_min", "1e-4"], lambda k, n: 1e-4 + 0.5 * (1e-3 - 1e-4) * (1 + math.cos(math.pi * k / n))),
                           ("exp", ["-podlstm_lr_decay_epochs", "1", "-podlstm_lr_decay_rate", "0.1", "-podlstm_lr_min", "5e-6"], lambda k, n: max(5e-6, 1e-3 * 0.1 ** (k // 2)))]:
    _, out = surge(["train", D, "-podlstm_search", "none", "-podlstm_arch", "I", "-podlstm_epochs", "3", "-podlstm_rollout", "2", "-podlstm_baselines", "0",
                    "-podlstm_lr_schedule", sched, "-train_output", "ls", "-podlstm_prefix", "ls"] + extra, w)
    rows = [ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()]
    got = [(int(r[0]), float(r[3])) for r in rows]
    ok = len(got) == 3 and all(abs(lr - rate(st - 1, 6)) < 1e-3 * rate(st - 1, 6) for st, lr in got)
    check(ok, f"lr_schedule {sched}: the rate at steps {[st for st, _ in got]} is {[lr for _, lr in got]} (want {[float('%.4g' % rate(st - 1, 6)) for st, _ in got]})")
# the rollout loss's training windows (rollout: 2, the schedules' runs): y holds the next 2 L steps, all in
# the fitting period (80 snapshots: 80 - 3 L + 1 = 57 windows), the scaled coefficients themselves -- y[w]
# is the inputs of windows w + L and w + 2 L (the gradient through the fed-back forecasts: podlstm_grad)
with h5py.File(os.path.join(w, "ls.windows.h5"), "r") as f:
    n = int(f.attrs["nsamples"])
    xw, yw = f["samples/x"][:n], f["samples/y"][:n]
check(n == 57 and yw.shape == (57, 16, 5) and np.array_equal(yw[:41, :8], xw[8:49]) and np.array_equal(yw[:41, 8:], xw[16:57]),
      f"rollout 2: {n} training windows (57) with targets of {yw.shape[1]} steps (16), the inputs of the windows L and 2 L later")
# the rollout loss on 1 and 2 ranks: the network trains on one rank from the same seed, on windows equal
# to round-off, so the trained weights and the scores agree as section 2's (docs/podlstm.md: < 1e-13)
rargs = ["train", D, "-podlstm_search", "none", "-podlstm_arch", "L16 I+1", "-podlstm_epochs", "3", "-podlstm_rollout", "2", "-podlstm_baselines", "0"]
surge(rargs + ["-train_output", "ro1", "-podlstm_prefix", "ro1"], w)
surge(rargs + ["-train_output", "ro2", "-podlstm_prefix", "ro2"], w, ranks=2)
r1, r2 = scores(os.path.join(w, "ro1.h5")), scores(os.path.join(w, "ro2.h5"))
with h5py.File(os.path.join(w, "ro1.h5"), "r") as f1, h5py.File(os.path.join(w, "ro2.h5"), "r") as f2:
    p1, p2 = f1["params_0"][()], f2["params_0"][()]
dp = np.max(np.abs(p1 - p2)) / np.max(np.abs(p1))
check(p1.shape == p2.shape and dp < 1e-13, f"rollout 2, 1 vs 2 ranks: the trained weights agree to {dp:.1e} of the largest (< 1e-13)")
for m in r1:
    rel = abs(r1[m] - r2[m]) / r1[m]
    check(rel < 1e-13, f"rollout 2, 1 vs 2 ranks, {m}: {r1[m]:.12f} vs {r2[m]:.12f} (rel. {rel:.1e} < 1e-13)")

# 5. residual networks on the VAR (the first run with input_noise: below)
NOISE = 0.1
_, out = surge(["train", D, "-podlstm_search", "none", "-podlstm_arch", "L16", "-podlstm_base", "var", "-podlstm_epochs", "1",
                "-podlstm_patience", "1", "-podlstm_start_lr", "1e-8", "-podlstm_input_noise", str(NOISE), "-podlstm_baselines", "0", "-train_output", "rv", "-podlstm_prefix", "rv"], w)
line = [ln for ln in out.splitlines() if "forecast the residual on VAR(" in ln][0]
nfit = int(line.split("fitted on the ")[1].split()[0])
with h5py.File(os.path.join(w, "rv.h5"), "r") as f:
    pb = int(f["var_weights"].attrs["var_order"])
    Wf = f["var_weights"][:]  # [K][1 + pK]: column k of the q x K least-squares solution
Wb = var_fit(pb, nfit)
dW = np.max(np.abs(Wf.T - Wb)) / np.max(np.abs(Wb))
check(dW < 1e-8, f"var_weights (order {pb}, fitted on the first {nfit} snapshots) equal numpy's least squares (max rel. diff {dW:.1e})")
# input_noise: the network is still zero (lr 1e-8), so the first epoch's loss is that of the targets the
# noise makes: the truth less the base's forecast of the noisy input, i.e. the stored (clean) residual y
# plus G n, G the scaled VAR's linear part, n ~ N(0, NOISE^2): expected mean(y^2) + NOISE^2 |G|_F^2 / (L K),
# with the standard deviation of that mean for the given y (Gaussian n); without the base's shift the
# loss would be mean(y^2) exactly
mse_n = float([ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()][0][1])
with h5py.File(os.path.join(w, "rv.windows.h5"), "r") as f:
    nrv = int(f.attrs["nsamples"])
    yrv = f["samples/y"][:nrv].reshape(nrv, -1)
with h5py.File(os.path.join(w, "rv.h5"), "r") as f:
    lo_v, hi_v = f.attrs["lo"][:], f.attrs["hi"][:]


def var_scaled_b(xs):
    hist = list(lo_v + xs.reshape(L, K) * (hi_v - lo_v))
    for _ in range(L):
        hist.append(np.r_[1.0, np.concatenate([hist[-j] for j in range(1, pb + 1)])] @ Wb)
    return ((np.array(hist[L:]) - lo_v) / (hi_v - lo_v)).ravel()


g0 = var_scaled_b(np.zeros(L * K))
Gv = np.array([var_scaled_b(np.eye(L * K)[j]) - g0 for j in range(L * K)]).T
m_ = L * K
exp_n = np.mean(yrv ** 2) + NOISE ** 2 * np.sum(Gv ** 2) / m_
GtG = Gv.T @ Gv
sd_n = np.sqrt(np.sum([2 * NOISE ** 4 * np.trace(GtG @ GtG) + 4 * NOISE ** 2 * np.sum((Gv.T @ yw) ** 2) for yw in yrv])) / (nrv * m_)
check(abs(mse_n - exp_n) < 4 * sd_n and abs(mse_n - np.mean(yrv ** 2)) > 4 * sd_n,
      f"input_noise {NOISE}: first-epoch loss {mse_n:.4e} is the noisy targets' expectation {exp_n:.4e} (+- {sd_n:.1e}; {(mse_n - exp_n) / sd_n:+.1f} sd), not the clean residual's {np.mean(yrv ** 2):.4e}")
fb = var_forecasts(Wb, pb)
vb = rmse(lambda s, lead: fb[(s, lead)])
sv = scores(os.path.join(w, "rv.h5"))["POD-LSTM"]
check(abs(vb - sv) < 1e-6 * vb, f"a residual network trained 1 epoch at lr 1e-8 forecasts as its base: RMSE {sv:.10f} vs numpy's VAR({pb}) {vb:.10f}")
# rollout 2 on the VAR: the untrained (zero) network's loss is the VAR's rollout error over 2 windows
_, out = surge(["train", D, "-podlstm_search", "none", "-podlstm_arch", "L16", "-podlstm_base", "var", "-podlstm_epochs", "1",
                "-podlstm_rollout", "2", "-podlstm_start_lr", "1e-8", "-podlstm_baselines", "0", "-train_output", "rr", "-podlstm_prefix", "rr"], w)
mse1 = float([ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()][0][1])
with h5py.File(os.path.join(w, "rr.windows.h5"), "r") as f:
    n = int(f.attrs["nsamples"])
    xw, yw = f["samples/x"][:n], f["samples/y"][:n]
with h5py.File(os.path.join(w, "rr.h5"), "r") as f:
    lo, hi, pr, Wr = f.attrs["lo"][:], f.attrs["hi"][:], int(f["var_weights"].attrs["var_order"]), f["var_weights"][:].T


def var_scaled(xs):
    """the VAR's next window from a scaled window, scaled"""
    hist = list(lo + xs * (hi - lo))
    for _ in range(L):
        hist.append(np.r_[1.0, np.concatenate([hist[-j] for j in range(1, pr + 1)])] @ Wr)
    return (np.array(hist[L:]) - lo) / (hi - lo)


err = []
for wdw in range(n):
    f1 = var_scaled(xw[wdw])  # y's first window is the residual on f1: the zero network's error is y itself
    f2 = var_scaled(f1)       # the second window forecast from the first's forecast (network + base)
    err.append(np.mean(np.r_[yw[wdw, :L].ravel(), (f2 - yw[wdw, L:]).ravel()] ** 2))
want = float(np.mean(err))
check(abs(mse1 - want) < 2e-4 * want, f"rollout 2 on base var: first-epoch loss {mse1:.4e} is the VAR's 2-window rollout error {want:.6e} (numpy, rel. {abs(mse1 - want) / want:.1e})")
# ... and its validation R2 (the zero network is the first candidate and at lr 1e-8 stays the best) is
# that of the VAR's rollout over the validation windows whose 2 windows lie in the validation period
r2line = [ln for ln in out.splitlines() if "model 0:" in ln and "validation R2" in ln][0]
r2s = float(r2line.split("validation R2")[1])
nva_ = int(round(0.2 * NTRAIN))
sa = (a[:NTRAIN] - lo) / (hi - lo)  # the scaled coefficients (the model's modes, lo, hi)
yv, fv = [], []
for wdw in range(nva_ - L + 1 - L):
    s0 = NTRAIN - nva_ - L + wdw
    f1 = var_scaled(sa[s0:s0 + L])
    yv.append(np.r_[(sa[s0 + L:s0 + 2 * L] - f1).ravel(), sa[s0 + 2 * L:s0 + 3 * L].ravel()])
    fv.append(np.r_[np.zeros(L * K), var_scaled(f1).ravel()])
yv, fv = np.array(yv), np.array(fv)
r2n = 1 - np.sum((yv - fv) ** 2) / np.sum((yv - yv.mean(0)) ** 2)
# 2e-6 relative: 5 printed decimals of an R2 near -40 (5 consecutive windows vary little), numpy's
# coefficients (1e-9) and the lr 1e-8 epoch (measured 7e-7)
check(abs(r2s - r2n) < 2e-6 * abs(r2n) + 1e-5, f"rollout 2: early stopping scores the rollout: validation R2 {r2s:.5f} is the VAR's 2-window R2 {r2n:.6f} (numpy, {len(yv)} windows, rel. {abs(r2s - r2n) / abs(r2n):.1e})")
surge(["train", D, "-podlstm_search", "random", "-podlstm_base", "var", "-podlstm_baselines", "0", "-train_output", "mv", "-podlstm_prefix", "mv"], w)
adv = advance_checksums("mv.h5")
check(abs(adv[0] - adv[1]) <= 1e-10 * abs(adv[0]), f"residual model through the slot: the same forecasts on 1 and 2 ranks (checksums {adv[0]:.12e}, {adv[1]:.12e})")

# 5c. residual networks on the quadratic regression (base: quadratic), rollout 2 at lr 1e-8 (the
# network stays zero): the lags and ridge numpy chooses on the validation windows are surge's, var_weights
# equal numpy's ridge regression of them, the first epoch's loss is the base's 2-window rollout error
# from the stored windows (the base iterated on the tape on scaled coefficients) and the test RMSE is
# numpy's quadratic forecast's
_, out = surge(["train", D, "-podlstm_search", "none", "-podlstm_arch", "L16", "-podlstm_base", "quadratic", "-podlstm_epochs", "1",
                "-podlstm_rollout", "2", "-podlstm_start_lr", "1e-8", "-podlstm_baselines", "0", "-train_output", "rq", "-podlstm_prefix", "rq"], w)
nfit = int([ln for ln in out.splitlines() if "forecast the residual on the quadratic regression" in ln][0].split("fitted on the ")[1].split()[0])
mse1 = float([ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()][0][1])
with h5py.File(os.path.join(w, "rq.windows.h5"), "r") as f:
    n = int(f.attrs["nsamples"])
    xw, yw = f["samples/x"][:n], f["samples/y"][:n]
with h5py.File(os.path.join(w, "rq.h5"), "r") as f:
    lo, hi, Wq = f.attrs["lo"][:], f.attrs["hi"][:], f["var_weights"][:].T
    pq, nq, rq = int(f["var_weights"].attrs["var_order"]), int(f["var_weights"].attrs["var_quadratic"]), float(f["var_weights"].attrs["ridge"])
iu = np.triu_indices(K)


def quad_row(hist, p):
    return np.r_[1.0, np.concatenate([hist[-j] for j in range(1, p + 1)]), np.outer(hist[-1], hist[-1])[iu]]


def quad_fit(p, ridge, nrows):
    G = np.array([quad_row(a[:tt], p) for tt in range(p, nrows)])
    M = G.T @ G
    return np.linalg.solve(M + ridge * np.trace(M) / M.shape[0] * np.eye(M.shape[0]), G.T @ a[p:nrows])


def quad_iter(W, p, hist):
    hist = list(hist)
    for _ in range(L):
        hist.append(quad_row(hist, p) @ W)
    return np.array(hist[-L:])


nva_ = int(round(0.2 * NTRAIN))
best = None
for pp in range(1, L + 1):  # the lags and ridge surge chooses: the smallest error of the validation windows' forecasts
    if nfit - pp < 2 * (1 + pp * K + K * (K + 1) // 2):
        break
    for rr in (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0):
        Wc = quad_fit(pp, rr, nfit)
        e = sum(np.sum((quad_iter(Wc, pp, a[s0:s0 + L]) - a[s0 + L:s0 + 2 * L]) ** 2) for s0 in range(NTRAIN - nva_ - L, NTRAIN - 2 * L + 1))
        if np.isfinite(e) and (best is None or e < best[0]):
            best = (e, pp, rr)
check(nq == K * (K + 1) // 2 and (pq, rq) == best[1:], f"base quadratic: {pq} lags, ridge {rq:g} ({nq} products), numpy chooses {best[1]} lags, ridge {best[2]:g} on the validation windows")
Wn = quad_fit(pq, rq, nfit)
dW = np.max(np.abs(Wq - Wn)) / np.max(np.abs(Wn))
check(dW < 1e-8, f"var_weights of base quadratic equal numpy's ridge regression on the first {nfit} snapshots (max rel. diff {dW:.1e})")


def quad_scaled(xs):
    return (quad_iter(Wn, pq, lo + xs * (hi - lo)) - lo) / (hi - lo)


err = []
for wdw in range(n):
    f1 = quad_scaled(xw[wdw])
    err.append(np.mean(np.r_[yw[wdw, :L].ravel(), (quad_scaled(f1) - yw[wdw, L:]).ravel()] ** 2))
want = float(np.mean(err))
check(abs(mse1 - want) < 2e-4 * want, f"rollout 2 on base quadratic: first-epoch loss {mse1:.4e} is the quadratic regression's 2-window rollout error {want:.6e} (numpy, rel. {abs(mse1 - want) / want:.1e})")
fq = {}
for wdw in range(nte):
    for lead, v in enumerate(quad_iter(Wn, pq, a[te0 + wdw:te0 + wdw + L])):
        fq[(te0 + wdw, lead)] = mean + Ug @ v
vq = rmse(lambda s, lead: fq[(s, lead)])
sq = scores(os.path.join(w, "rq.h5"))["POD-LSTM"]
check(abs(vq - sq) < 1e-6 * vq, f"a residual network on base quadratic trained 1 epoch at lr 1e-8 forecasts as its base: test RMSE {sq:.10f} vs numpy's quadratic regression {vq:.10f}")

# 5d. model selection by free runs (free_run: 40): a linear network (arch I: the window head's W x + b)
# trained 20 epochs at lr 1e-2 passes over epochs of a better validation R2 whose own iteration leaves
# the attractor and keeps one whose iteration stays. numpy rebuilds the kept network from params_0
# (its test RMSE equals surge's to 1e-9: the same network), iterates it window to window from the same 4
# starts (the L scaled snapshots before nfit - st nfit / 4) and applies the same test (every mode within
# its fitting range widened by half its width; its standard deviation over the run's second half at least
# half the fitting period's): the kept weights' runs stay
NFREE = 40
_, out = surge(["train", D, "-podlstm_search", "none", "-podlstm_arch", "I", "-podlstm_hand_arch", "I", "-podlstm_epochs", "20", "-podlstm_patience", "20",
                "-podlstm_start_lr", "1e-2", "-podlstm_free_run", str(NFREE), "-podlstm_baselines", "0", "-train_output", "fr", "-podlstm_prefix", "fr"], w)
sel = [ln for ln in out.splitlines() if ln.startswith("podlstm: free-run selection ('I')")]
check(len(sel) == 1 and "stay on the training attractor" in sel[0] and "passed over" in sel[0] and int(sel[0].split("; ")[1].split()[0]) > 0,
      f"free_run {NFREE}: a staying epoch kept, epochs of a better R2 passed over: {sel[:1]}")
with h5py.File(os.path.join(w, "fr.h5"), "r") as f:
    lo, hi, pf_ = f.attrs["lo"][:], f.attrs["hi"][:], f["params_0"][()]
Wl, bl = pf_[:(L * K) ** 2].reshape(L * K, L * K), pf_[(L * K) ** 2:]
net = lambda xs: (Wl @ xs.ravel() + bl).reshape(L, K)  # noqa: E731
sfr = scores(os.path.join(w, "fr.h5"))["POD-LSTM"]
vfr = rmse(lambda s, lead: mean + Ug @ (lo + net((a[s:s + L] - lo) / (hi - lo))[lead] * (hi - lo)))
check(abs(vfr - sfr) < 1e-9 * vfr, f"the kept linear network rebuilt by numpy: test RMSE {vfr:.10f} vs surge's {sfr:.10f}")
nfit = NTRAIN - int(round(0.2 * NTRAIN))
sfit = (a[:nfit] - lo) / (hi - lo)
span = sfit.max(0) - sfit.min(0)
stays = []
for st in range(4):
    s0 = max(L, nfit - st * (nfit // 4))
    x, run = sfit[s0 - L:s0], []
    while len(run) < NFREE:
        x = net(x)
        run.extend(x)
    run = np.array(run[:NFREE])
    inside = np.all(np.isfinite(run)) and np.all(run >= sfit.min(0) - 0.5 * span) and np.all(run <= sfit.max(0) + 0.5 * span)
    stays.append(bool(inside and np.all(run[NFREE // 2:].std(0) >= 0.5 * sfit.std(0))))
check(all(stays), f"numpy's free runs of the kept network from the 4 starts stay on the attractor: {stays}")

# 6. the fallback: networks trained one epoch lose to the VAR on validation
fbargs = ["train", D, "-podlstm_search", "random", "-podlstm_epochs", "1", "-podlstm_patience", "1", "-podlstm_baselines", "0"]
_, out = surge(fbargs + ["-train_output", "nf", "-podlstm_prefix", "nf"], w)
lines = [ln for ln in out.splitlines() if "validation windows the served network" in ln]
check(len(lines) == 1 and "loses to VAR(" in lines[0] and "served anyway" in lines[0], f"without fallback: one line says the network loses to the VAR and is served anyway: {lines}")
with h5py.File(os.path.join(w, "nf.h5"), "r") as f:
    check("fallback_var" not in f, "without fallback: no fallback VAR in the model file")
_, out = surge(fbargs + ["-train_output", "fb", "-podlstm_prefix", "fb", "-podlstm_fallback", "baseline"], w)
lines = [ln for ln in out.splitlines() if "validation windows the served network" in ln]
check(len(lines) == 1 and "fallback: the model serves VAR(" in lines[0], f"fallback: baseline: one line says the model serves the VAR: {lines}")
pf = int(lines[0].split("loses to VAR(")[1].split(")")[0])
with h5py.File(os.path.join(w, "fb.h5"), "r") as f:
    check(int(f["fallback_var"].attrs["var_order"]) == pf, "the model file holds the fallback VAR of the order printed")
    Wf = f["fallback_var"][:]
Wn = var_fit(pf, NTRAIN)  # the whole training period
dW = np.max(np.abs(Wf.T - Wn)) / np.max(np.abs(Wn))
check(dW < 1e-8, f"fallback_var (order {pf}) equals numpy's least squares on the whole training period (max rel. diff {dW:.1e})")
# the served forecast through the field.advance provider: numpy's VAR iterated from the last L training
# snapshots' coefficients, reconstructed, and summed with the weights test_podlstm prints it with
r = subprocess.run([os.path.join(ROOT, "build", "tests", "test_podlstm"), "advance", "fb.h5", "sst_small.h5", "T", str(SKIP), str(NTRAIN)],
                   cwd=w, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
csl = [ln for ln in r.stdout.splitlines() if "weighted forecast sum" in ln]
check(r.returncode == 0 and len(csl) == 1 and "serves its fallback VAR" in csl[0], f"test_podlstm advance of the fallback model: {csl or r.stdout[-500:]}")
cs = float(csl[0].split("weighted forecast sum ")[1].split()[0])
hist = list(a[NTRAIN - L:NTRAIN])
for lead in range(L):
    hist.append(np.r_[1.0, np.concatenate([hist[-j] for j in range(1, pf + 1)])] @ Wn)
fv = np.concatenate([mean + Ug @ h for h in hist[L:]])
csn = np.sum(fv * (np.arange(fv.size) % 7 + 1))
check(abs(cs - csn) < 1e-9 * abs(csn), f"the provider serves numpy's VAR({pf}): weighted forecast sum {cs:.12e} vs {csn:.12e}")
print("podlstm training checks passed")
