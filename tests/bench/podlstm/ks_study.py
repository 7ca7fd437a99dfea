#!/usr/bin/env python3
"""POD-LSTM on Kuramoto-Sivashinsky, L = 22, against persistence, VAR, DMD and a quadratic regression
(docs/podlstm.md "A chaotic benchmark: Kuramoto-Sivashinsky"). Run by ks_study.sh after the searches:

    /usr/bin/python3 tests/bench/podlstm/ks_study.py WORKDIR [--free] [--data FILE] [--prefix P]
                     [--skip N] [--ntrain N] [--ntest N] [--advance N]
                     [--lam LAMBDA] [--deck KSDECK] [--ensemble ENSDECK]

WORKDIR holds the ensemble's data (--data, default ks22_data.h5 of inputs/podlstm/ks22_ensemble.yaml)
and the models P_m{M}_s{S}.h5 (--prefix, default ks22; inputs/podlstm/ks22_train.yaml, member M,
seed S). --skip/--ntrain/--ntest are the training deck's (defaults 100, 3000, 1000: ks22_train.yaml).
The snapshot spacing D is the model's (its dt), checked against the data's sample times; the window
L is the model's. A model trained with a search scores its searched network, its top-k mean and the
hand-designed LSTM; one trained with `search: none` (a given architecture) its one network.
The dense data (inputs/podlstm/ks22_dense_ensemble.yaml, D = 1) with rollout-trained models
(inputs/podlstm/ks22_dense_train.yaml): --data ks22_dense_data.h5 --prefix ks22d --skip 300
--ntrain 4000 --ntest 1000. Another domain (ks_study.sh --large, L = 44): --lam its leading Lyapunov
exponent (default 0.0475, L = 22), --deck the solver deck of the slot runs (default inputs/ks/ks22.yaml)
and --ensemble the data's ensemble deck, which names the members' seeds (default
inputs/podlstm/ks22_ensemble.yaml). For every model:

1. the coefficients a_t = modes (u_t / scale - mean) of the member's snapshots with the model's own POD;
   the POD floor and VAR(p) (p as surge printed; least squares on the fitting part, surge's small
   ridge) recomputed here and compared with the scores surge stored in the model: the windows, the
   projection and the scoring of this script are surge's (printed: max relative difference);
2. baselines surge does not print, fitted on the same fitting part (the training period less its
   validation tail) and iterated one step at a time: DMD (a_{t+1} = A a_t, the exact DMD of the POD
   coefficients) and a quadratic regression a_{t+1} = W [1, a_t, a_{t-1}, a_t (x) a_t] (ridge chosen
   on the validation windows) -- ks_baselines.py, verified by tests/regression/podlstm/ks_baselines_test.py;
3. per lead (in Lyapunov times, lambda_1 = --lam): the test RMSE of u beyond the POD floor,
   sqrt(RMSE^2 - floor^2), for every method;
4. valid prediction time (VPT): the first time the normalised error ||u_pred - u|| / sigma (RMS over
   the grid; sigma the RMS anomaly of u over the training period) exceeds 0.5, from every 8th test
   window, iterated one step at a time; for POD-LSTM (with --free) from runs of the solver's
   field.advance slot served by the model (advance_snapshots --advance, default 1: the first snapshot
   of each forecast fed back; L: the model's own window-to-window iteration; restarted from the
   solver's checkpoint), --starts starting points (default 5) spread over the test period; from the
   same runs the error beyond the floor per snapshot up to one Lyapunov time, against VAR, DMD, the
   quadratic regression and persistence from the same starting points. The resolution of the
   network's VPT is the snapshots the slot writes: every one with --advance 1 (0.0475 Lyapunov times
   on the dense data), the last of each call with --advance L;
5. (--free) a free run of 50 Lyapunov times from the test period's start, the model's own window-to-
   window iteration (advance_snapshots L): the coefficients' distributions (mean, standard deviation,
   the histogram overlap per mode) and the energy spectrum <|u_k|^2> against the truth's test period
   (projected on the modes), and the same for the truth's own last 50 Lyapunov times of training (the reference: how closely two
   finite stretches of the attractor agree); "on the attractor" is on_attractor()'s test.
A slot run whose forecast the slot rejects (NaN/Inf, or |u| above --bound, default 30 = 10x the
truth's largest) has left the attractor: the study reports after how many Lyapunov times, counts it a
failure of the bar, and goes on (it never stops at a blow-up)."""
import glob
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ks_baselines import dmd_fit, iterate, quad_fit, quad_features, var_fit  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.environ.get("SURGE", os.path.join(ROOT, "bin", "surge"))


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


LAM = arg("--lam", 0.0475)    # leading Lyapunov exponent: 0.0475 at L = 22 (docs/ks.md), 0.078 at L = 44 (--large)
KSDECK = os.path.join(ROOT, arg("--deck", "inputs/ks/ks22.yaml"))  # the solver of the slot runs: the data's L and grid
ENSDECK = os.path.join(ROOT, arg("--ensemble", "inputs/podlstm/ks22_ensemble.yaml"))  # names the members' ks_seed

W = os.path.abspath(sys.argv[1])
FREE = "--free" in sys.argv
DATA, PREFIX = arg("--data", "ks22_data.h5"), arg("--prefix", "ks22")
SKIP, NTRAIN, NTEST = arg("--skip", 100), arg("--ntrain", 3000), arg("--ntest", 1000)
ADVANCE = arg("--advance", 1)
STARTS = arg("--starts", 5)   # VPT starts of the slot runs, spread evenly over the test period
BOUND = arg("--bound", 30.0)  # the slot's sanity bound on |u|: 10x the truth's largest |u| (3.0-3.2 at L = 22)
NFIT = NTRAIN - int(round(0.2 * NTRAIN))
D = L = LT = None             # snapshot spacing, window, Lyapunov times per snapshot: from the models


def member_series(m):
    with h5py.File(os.path.join(W, DATA), "r") as f:
        mem = f["samples/member"][()]
        t = f["samples/time"][()][mem == m]
        dt = np.diff(t)
        if not np.allclose(dt, D, rtol=0, atol=1e-9 * D):
            sys.exit(f"ks_study: the model's snapshot spacing {D:g} is not that of {DATA} (member {m}: {dt.min():g}..{dt.max():g}): give the model's --data")
        return f["samples/u"][()][mem == m][SKIP:SKIP + NTRAIN + NTEST]


def member_seed(m):
    """the member's ks_seed, as its checkpoint names it: a 0.25-long run of the same ensemble deck"""
    chk = os.path.join(W, "seeds.members", f"member_{m:05d}.chk.h5")
    if not os.path.exists(chk):
        subprocess.run([SURGE, "ensemble", ENSDECK, "-sim_t_end", "0.25", "-ensemble_output", "seeds"],
                       cwd=W, check=True, stdout=subprocess.DEVNULL)
    with h5py.File(chk, "r") as f:
        return int(f["layout"].attrs["ks_seed"])


def rmse_by_lead(X, rec_of):
    """surge's test windows: inputs X[s .. s+L-1], targets X[s+L+lead], s = NTRAIN-L .. NTRAIN+NTEST-2L"""
    te0, nte = NTRAIN - L, NTEST - L + 1
    e = np.zeros(L)
    for wdw in range(nte):
        s = te0 + wdw
        P = rec_of(s)                 # [L][n] forecasts of X[s+L .. s+2L-1]
        e += np.mean((P - X[s + L:s + 2 * L]) ** 2, axis=1)
    return np.sqrt(e / nte)


def beyond(r, floor):
    return np.sqrt(np.maximum(r ** 2 - floor ** 2, 0))


def slot_run(cmd, out, prepare=lambda: None, t_start=None):
    """run a slot run (cmd, writing OUT.h5; prepare() first); a forecast the slot rejects (NaN/Inf or above
    the sanity bound) means the model has left the attractor: returns (fields {snapshot index: u} or None,
    the Lyapunov times the surrogate served before its first rejected forecast or None). A run that then
    blows up (the solver from the diverged state) writes no fields: with t_start (the time the surrogate
    starts serving) it is run again to the start of that first rejected call, so the fields up to it
    come back (everything after it is invalid: an error above any threshold)."""
    def once(c):
        prepare()
        res = subprocess.run(c, cwd=W, capture_output=True, text=True)
        log = res.stdout + res.stderr
        with open(os.path.join(W, out + ".log"), "w") as f:
            f.write(log)
        return res.returncode, log

    rc, log = once(cmd)
    sw = [int(q.split("step ")[1].split(":")[0]) for q in log.splitlines() if "field.advance: step" in q and "-> podlstm" in q]
    rj = [int(q.split("step ")[1].split(":")[0]) for q in log.splitlines() if "field.advance: step" in q and "returned NaN/Inf" in q]
    snaps = int(cmd[len(cmd) - 1 - cmd[::-1].index("-ks_advance_snapshots") + 1])  # the last given
    ncalls = rj[0] - sw[0] if rj and sw else None
    if rc != 0 and ncalls is None:
        sys.exit(f"ks_study: {' '.join(cmd)} failed (rc {rc}) without a rejected forecast: see {out}.log")
    if rc != 0 and t_start is not None and ncalls > 0:
        c = list(cmd)
        c[c.index("-sim_t_end") + 1] = str(t_start + ncalls * snaps * D)
        rc, _ = once(c)
    fr = None
    if rc == 0 and os.path.exists(os.path.join(W, out + ".h5")):
        with h5py.File(os.path.join(W, out + ".h5"), "r") as f:
            g = f["fields/u"]
            fr = {round(float(g[q].attrs["time"]) / D): g[q][()] for q in g}
    return fr, (ncalls * snaps * LT if ncalls is not None else None)


def free_stats(af, at, P, T):
    """a run's coefficients af [n][K] and fields P against the truth's at, T: per mode |mean - truth| / std,
    the standard deviation ratio, the histogram overlap (20 bins over both ranges), and the energy
    spectrum <|u_k|^2> ratio for k = 1..8 (T: the truth projected on the model's modes, what the model
    can represent: 8 POD modes of a translation-invariant system are the Fourier pairs k = 1..4, and a
    model has no energy at k = 5..8 -- the "spectrum" entry compares the wavenumbers where the projected
    truth holds at least 1 % of its peak energy)"""
    ov = []
    for q in range(at.shape[1]):
        lo, hi = min(af[:, q].min(), at[:, q].min()), max(af[:, q].max(), at[:, q].max())
        hf, _ = np.histogram(af[:, q], 20, (lo, hi))
        ht, _ = np.histogram(at[:, q], 20, (lo, hi))
        ov.append(np.sum(np.minimum(hf / hf.sum(), ht / ht.sum())))
    Ef, Et = np.mean(np.abs(np.fft.rfft(P, axis=1)) ** 2, 0), np.mean(np.abs(np.fft.rfft(T, axis=1)) ** 2, 0)
    kk = max(8, at.shape[1])  # k = 1..8 with 8 modes (L = 22); with K modes k = 1..K (the pairs they hold lie within)
    on = Et[1:kk + 1] >= 0.01 * Et[1:kk + 1].max()
    return {"mean": np.abs(af.mean(0) - at.mean(0)) / at.std(0), "std": af.std(0) / at.std(0), "overlap": np.array(ov), "spec8": Ef[1:kk + 1] / Et[1:kk + 1], "spec": (Ef[1:kk + 1] / Et[1:kk + 1])[on]}


def on_attractor(f, ref):
    """the bar's "stays on the attractor": every mode's histogram overlap at least the truth's own
    (two independent 50-Lyapunov-time stretches) less 0.15, every standard deviation and spectrum ratio
    (k = 1..8) within a factor 1.5 of 1 -- the spread two stretches of the truth show is within these
    (printed as the reference)"""
    return bool(np.all(f["overlap"] >= ref["overlap"] - 0.15) and np.all(np.abs(np.log(f["std"])) <= np.log(1.5)) and np.all(np.abs(np.log(f["spec"])) <= np.log(1.5)))


def vpt_of(err_curve):
    over = np.nonzero(err_curve > 0.5)[0]
    return (over[0] if over.size else err_curve.size) * LT  # in Lyapunov times: lead index 0 is one step


results = []
# the search's work files (NAME.windows.h5) match the pattern too: models only
for path in sorted(p for p in glob.glob(os.path.join(W, PREFIX + "_m*_s*.h5")) if os.path.basename(p).count(".") == 1):
    name = os.path.basename(path)[:-3]
    m, s = int(name.split("_m")[1].split("_")[0]), int(name.split("_s")[1])
    with h5py.File(path, "r") as f:
        mean, modes, scale = f["mean"][()], f["modes"][()], float(f.attrs["fscale"][0])
        meth = f["scores"].attrs["methods"]
        meth = (meth.decode() if isinstance(meth, bytes) else str(meth)).split(";")
        stored = {k: f["scores/rmse_lead"][()][i, 0, :] for i, k in enumerate(meth)}
        dtm, Lm = float(f.attrs["dt"]), int(f.attrs["L"])
    NMODES = modes.shape[0]
    if D is not None and (dtm != D or Lm != L):
        sys.exit(f"ks_study: {name} has snapshot spacing {dtm:g} and window {Lm}, the models before it {D:g} and {L}: one study, one kind of model")
    D, L = dtm, Lm
    LT = D * LAM
    X = member_series(m)
    a = (X / scale - mean) @ modes.T
    rec = lambda A: scale * (mean + A @ modes)  # noqa: E731
    sigma = np.sqrt(np.mean((X[:NTRAIN] - X[:NTRAIN].mean(0)) ** 2))
    floor = rmse_by_lead(X, lambda s0: rec(a[s0 + L:s0 + 2 * L]))
    pname = [k for k in meth if k.startswith("VAR(")][0]
    p = int(pname[4:pname.index(")")])
    Wv = var_fit(a[:NTRAIN], p)  # surge fits its VAR on the whole training period (checked below)
    var = rmse_by_lead(X, lambda s0: rec(iterate("var", Wv, a[s0:s0 + L], L, p)))
    check_floor = np.max(np.abs(floor / stored["POD truth (the floor)"] - 1))
    check_var = np.max(np.abs(var / stored[pname] - 1))
    A1 = dmd_fit(a[:NFIT])
    dmd = rmse_by_lead(X, lambda s0: rec(iterate("dmd", A1, a[s0:s0 + L], L)))
    # the quadratic regression's ridge on the validation windows (lead-averaged RMSE of u)
    best = None
    for ridge in (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0):
        Wq = quad_fit(a[:NFIT], ridge)
        ev = 0.0
        for s0 in range(NFIT, NTRAIN - 2 * L + 1, 4):
            ev += np.mean((rec(iterate("quad", Wq, a[s0:s0 + L], L)) - X[s0 + L:s0 + 2 * L]) ** 2)
        if best is None or ev < best[0]:
            best = (ev, ridge, Wq)
    Wq = best[2]
    quad = rmse_by_lead(X, lambda s0: rec(iterate("quad", Wq, a[s0:s0 + L], L)))
    Wq2 = quad_fit(a[:NFIT], 1e-2)  # a lighter ridge: better at the first leads, diverging later (not chosen by validation)
    quad2 = rmse_by_lead(X, lambda s0: rec(iterate("quad", Wq2, a[s0:s0 + L], L)))
    r = {"name": name, "m": m, "s": s, "floor": floor, "check_floor": check_floor, "check_var": check_var, "p": p, "ridge": best[1],
         "var": var, "persistence": stored["persistence"], "dmd": dmd, "quad": quad, "quad_1e-2": quad2}
    # a searched model: its searched network, the top-k mean, the hand-designed LSTM; search: none: its one network
    for key, pre in (("searched", "POD-LSTM"), ("top", "POD-LSTM (top"), ("hand", "hand"), ("quadbase", "quadratic regression")):
        k = [q for q in meth if q == pre or q.startswith(pre + " (searched)") or (key != "searched" and q.startswith(pre))]
        if k:
            r[key] = stored[k[0]]
    # valid prediction times of the baselines, iterated 60 steps from every 8th test window
    H = int(np.ceil(8.55 / LT))    # 8.55 Lyapunov times (60 snapshots 3 time units apart): past every VPT seen
    for key, kind, Wm, pp in (("var", "var", Wv, p), ("dmd", "dmd", A1, 1), ("quad", "quad", Wq, 2)):
        v = []
        for s0 in range(NTRAIN - L, NTRAIN + NTEST - L - H, 8):
            P = rec(iterate(kind, Wm, a[s0:s0 + L], H, pp))
            v.append(vpt_of(np.sqrt(np.mean((P - X[s0 + L:s0 + L + H]) ** 2, axis=1)) / sigma))
        r["vpt_" + key] = (np.mean(v), np.std(v) / np.sqrt(len(v)), len(v))
    if FREE:
        seed = member_seed(m)
        vl = []
        for k, start in enumerate(range(0, NTEST, NTEST // STARTS)[:STARTS]):
            n_free = int(np.ceil(max(2.9, 1.0 + 1e-9) / LT))  # 2.9 Lyapunov times: past every VPT seen
            i0 = NTRAIN + start            # snapshot index (after SKIP) of the last solver state
            T0 = (SKIP + i0) * D
            out = f"free_{name}_a{ADVANCE}_{k}"
            common = ["nice", "-n", "5", SURGE, "run", KSDECK, "-ks_seed", str(seed), "-ks_lyapunov", "false",
                      "-ks_advance_dt", str(D), "-ks_advance_snapshots", str(ADVANCE), "-ks_advance_swap_max_value", str(BOUND), "-sim_diag_every", "1000000", "-sim_progress_every", "100000000"]
            warm = f"warm_{PREFIX}_m{m}_{k}"  # the solver alone to T0 through the slot (its history checkpointed), shared by the member's models
            if not os.path.exists(os.path.join(W, warm + ".chk.h5")):
                subprocess.run(common + ["-sim_t_end", str(T0), "-sim_field_every", "0", "-sim_output", warm], cwd=W, check=True, stdout=subprocess.DEVNULL)
            def prepare(warm=warm, out=out):
                for ext in (".h5", ".chk.h5"):
                    shutil.copy(os.path.join(W, warm + ext), os.path.join(W, out + ext))
            fr, left = slot_run(common + ["-ks_advance_surrogate", "podlstm", "-ks_podlstm_model", path, "-ks_advance_swap_policy", "static",
                                          "-ks_advance_swap_use", "surrogate", "-sim_t_end", str(T0 + n_free * D), "-sim_field_every", "1",
                                          "-sim_output", out, "-restart", out + ".chk.h5", "-restart_new_options"], out, prepare, T0)
            if left is not None:
                r["blowups_vpt"] = r.get("blowups_vpt", 0) + 1
            if fr is None or not [j for j in fr if SKIP + i0 < j]:  # left at the first call: valid for no snapshot
                vl.append(0.0)
                continue
            # the snapshots written: every one with advance_snapshots 1; with more, the last of each call
            idx = [j for j in sorted(fr) if SKIP + i0 < j < SKIP + len(X)]
            P = np.array([fr[j] for j in idx])
            lead = np.array(idx) - SKIP - i0                 # 1, 2, ... (or ADVANCE, 2 ADVANCE, ...)
            e = np.sqrt(np.mean((P - X[lead + i0]) ** 2, axis=1)) / sigma
            over = np.nonzero((e > 0.5) & (lead <= H))[0]
            # valid to the last written snapshot before the first one past 0.5 (ADVANCE 1: vpt_of's)
            vl.append((lead[over[0] - 1] if over.size and over[0] > 0 else (0 if over.size else min(H, lead[-1]))) * LT)
            # error per snapshot up to one Lyapunov time, the slot's forecast and the baselines from the same start
            nl1 = int(np.floor(1 / LT + 1e-9))
            hist = a[i0 - max(L, p) + 1:i0 + 1]
            ks = lead[lead <= nl1] - 1                       # the written leads up to one Lyapunov time (0-based)
            if ks.size < (nl1 if ADVANCE == 1 else nl1 // ADVANCE):
                continue  # left the attractor before one Lyapunov time: in the VPT, not in the per-lead comparison
            r["slot_leads"] = ks
            r["slot_n"] = r.get("slot_n", 0) + 1
            tr = X[i0 + 1:i0 + 1 + nl1][ks]
            for key, f_of in (("lstm", lambda: P[:len(ks)]), ("floor", lambda: rec(a[i0 + 1:i0 + 1 + nl1])[ks]),
                              ("var", lambda: rec(iterate("var", Wv, hist, nl1, p))[ks]), ("dmd", lambda: rec(iterate("dmd", A1, hist, nl1))[ks]),
                              ("quad", lambda: rec(iterate("quad", Wq, hist, nl1))[ks]), ("persistence", lambda: np.repeat(X[i0:i0 + 1], len(ks), 0))):
                r.setdefault("slot_" + key, []).append(np.mean((f_of() - tr) ** 2, axis=1))
        # the free run: 50 Lyapunov times (352 snapshots 3 time units apart) from the test period's start, the
        # model's own window-to-window iteration (advance_snapshots L), every call written
        n50 = int(np.ceil(50 / LT))
        out, T0 = f"free50_{name}", (SKIP + NTRAIN) * D
        fr, left = slot_run(common + ["-ks_advance_snapshots", str(L), "-ks_advance_surrogate", "podlstm", "-ks_podlstm_model", path, "-ks_advance_swap_policy", "static",
                                      "-ks_advance_swap_use", "surrogate", "-ks_advance_warmup", str(T0 - 4 * D), "-sim_t_end", str(T0 + n50 * D),
                                      "-sim_field_every", "1", "-sim_output", out], out)
        r["free_left"] = left
        at = a[NTRAIN:]
        # the reference: the truth's own last 50 Lyapunov times of the training period against its test period
        # (two independent stretches of the attractor: how well finite runs can match at all)
        ref = X[NTRAIN - n50:NTRAIN]
        Tp = rec(at)  # the test period projected on the modes
        r["ref"] = free_stats((ref / scale - mean) @ modes.T, at, rec((ref / scale - mean) @ modes.T), Tp)
        if fr is not None and left is None:
            t_sw = min(j for j in fr if j * D >= T0 - 4 * D)  # the first call the surrogate serves starts here
            P = np.array([fr[j] for j in sorted(fr) if j > t_sw])
            r["free"] = free_stats((P / scale - mean) @ modes.T, at, P, Tp)
            r["free_len"] = (max(fr) - t_sw) * LT
            r["free_maxabs"] = (np.abs(P).max(), np.abs(X[NTRAIN:]).max())
            r["free_rms"] = (np.sqrt(np.mean(P[len(P) // 2:] ** 2)), np.sqrt(np.mean(X[NTRAIN:] ** 2)))
        r["vpt_lstm"] = (np.mean(vl), np.std(vl) / np.sqrt(len(vl)), len(vl))
        for key in [q for q in r if q.startswith("slot_") and q not in ("slot_leads", "slot_n")]:
            r[key] = np.sqrt(np.mean(r[key], axis=0))
    results.append(r)

if not results:
    sys.exit(f"ks_study: no models {PREFIX}_m*_s*.h5 in {W}")
leads = "  ".join(f"{(k + 1) * LT:5.2f}" for k in range(L))
print(f"KS ({os.path.relpath(KSDECK, ROOT)}), {NMODES} POD modes, lambda_1 = {LAM:g}, snapshots {D:g} time units apart (from the models, checked against {DATA}); error beyond the POD floor by lead (Lyapunov times: {leads})")
for r in results:
    print(f"\n{r['name']}: floor {np.mean(r['floor']):.4f}; floor and VAR({r['p']}) recomputed here vs surge's stored scores: {r['check_floor']:.1e}, {r['check_var']:.1e}; quadratic ridge {r['ridge']:g}")
    for key in [q for q in ("searched", "top", "hand", "var", "dmd", "quad", "quad_1e-2", "quadbase", "persistence") if q in r]:
        b = beyond(r[key], r["floor"])
        print(f"  {key:12s} " + " ".join(f"{x:6.3f}" for x in b) + f"   all {beyond(np.sqrt(np.mean(r[key] ** 2)), np.sqrt(np.mean(r['floor'] ** 2))):.3f}")
    print("  VPT (Lyapunov times, mean +- s.e., starts): " + ", ".join(f"{k[4:]} {v[0]:.2f} +- {v[1]:.2f} ({v[2]})" for k, v in r.items() if k.startswith("vpt_")))
    if "ref" in r:
        def show(f):
            return (f"|mean - truth|/std per mode {np.round(f['mean'], 2)}; std ratio {np.round(f['std'], 2)}; histogram overlap {np.round(f['overlap'], 2)};"
                    f" spectrum ratio to the projected truth k=1..{f['spec8'].size} {np.round(f['spec8'], 3)}")
        if r["free_left"] is not None:
            print(f"  free run: LEFT THE ATTRACTOR -- the slot rejected a forecast (NaN/Inf or |u| above {BOUND:g}) after {r['free_left']:.1f} Lyapunov times")
        else:
            print(f"  free run {r['free_len']:.1f} Lyapunov times ({'on' if on_attractor(r['free'], r['ref']) else 'NOT on'} the attractor): " + show(r["free"]) +
                  f"; max|u| {r['free_maxabs'][0]:.2f} (truth {r['free_maxabs'][1]:.2f}); RMS of u over its second half {r['free_rms'][0]:.3f} (truth {r['free_rms'][1]:.3f})")
        print("  reference, the truth's last 50 Lyapunov times of training against its test period: " + show(r["ref"]))
    if "slot_lstm" in r:
        nl1 = r["slot_lstm"].size
        sel = sorted(set(max(0, int(round(x * nl1)) - 1) for x in (0.25, 0.5, 0.75, 1.0)))
        print(f"  the slot's forecasts (advance_snapshots {ADVANCE}), error beyond the floor at " + ", ".join(f"{(r['slot_leads'][j] + 1) * LT:.2f}" for j in sel) + f" Lyapunov times ({r['slot_n']} starts):")
        for key in ("lstm", "var", "dmd", "quad", "persistence"):
            b = beyond(r["slot_" + key], r["slot_floor"])
            print(f"    {key:12s} " + " ".join(f"{b[j]:6.3f}" for j in sel) + f"   worst ratio to the best baseline over the {nl1} leads written: " +
                  (f"{np.max(b / np.min([beyond(r['slot_' + q], r['slot_floor']) for q in ('var', 'dmd', 'quad', 'persistence')], axis=0)):.3f}" if key == "lstm" else ""))

# the bar: POD-LSTM (top-k mean and searched) below every baseline at every lead <= 1 Lyapunov time
nl = min(L, int(np.floor(1 / LT + 1e-9)))
print(f"\nThe bar, leads 1..{nl} (<= 1 Lyapunov time; the test windows' leads):")
for key in [q for q in ("top", "searched") if q in results[0]]:
    wins, worst = 0, []
    for r in results:
        bl = np.min([beyond(r[b], r["floor"])[:nl] for b in ("var", "dmd", "quad", "quadbase", "persistence", "hand") if b in r], axis=0)
        mine = beyond(r[key], r["floor"])[:nl]
        wins += int(np.all(mine < bl))
        worst.append(np.max(mine / bl))
    print(f"  POD-LSTM {key}: below every baseline at every lead in {wins} of {len(results)} runs; worst ratio to the best baseline per run {np.round(worst, 3)}")
if results and "vpt_lstm" in results[0]:
    rat = [r["vpt_lstm"][0] / r["vpt_var"][0] for r in results]
    print(f"  VPT ratio POD-LSTM / VAR per run: {np.round(rat, 2)} (bar: >= 2); met in {sum(x >= 2 for x in rat)} of {len(rat)} runs"
          + (f"; {sum(r.get('blowups_vpt', 0) for r in results)} VPT runs left the attractor before their end (their errors up to the first rejected forecast count; it and all after it are invalid)" if any("blowups_vpt" in r for r in results) else ""))
    ok = [r["free_left"] is None and on_attractor(r["free"], r["ref"]) for r in results]
    print(f"  free runs of 50 Lyapunov times on the attractor: {sum(ok)} of {len(ok)} runs" +
          "".join(f"; {r['name']} left it after {r['free_left']:.1f} Lyapunov times" for r in results if r["free_left"] is not None))
