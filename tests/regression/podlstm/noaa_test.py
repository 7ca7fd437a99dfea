#!/usr/bin/env python3
"""POD-LSTM's baselines on the paper's real data (inputs/podlstm/noaa_sst.yaml: the 5 POD coefficients
of NOAA OI SST v2, inputs/podlstm/data/noaa_sst_pod), recomputed by numpy, ~10 s:

surge train on the .npy coefficient series (search none, one identity network trained 1 epoch: only
the baselines matter here) with the paper's split (427 weeks train, the 1,487 after them test, windows
8 -> 8), 3 annual harmonics. numpy, on the raw coefficients (surge's POD of a full-rank 5-entry series
is a rotation, and every baseline is equivariant under it), gives every lead's error beyond the
5-mode floor in degC (the coefficient error's norm / sqrt(44219); surge: RMSE x sqrt(5 / 44219)) and
anomaly correlation, equal to surge's to 1e-9 relative (1e-7 for the least-squares methods: surge's
ridge of 1e-12 of the mean diagonal): persistence; the climatology of 3 harmonics of the 365.25-day
year fitted on the training weeks; VAR(p) of the order surge chose, refitted on the training weeks and
iterated; the LIM (harmonic climatology + VAR of the anomalies, its order as printed); the direct
linear map per lead from the last 8 anomalies and the target's season. The POD floor is 0 (5 modes of
5 entries). Bad data refused: a .npy of another dtype, series of different mode counts."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import ROOT, check, deck, surge, workdir  # noqa: E402

w = workdir("podlstm_noaa")
DATA = os.path.join(ROOT, "inputs", "podlstm", "data", "noaa_sst_pod")
files = [os.path.join(DATA, "SST_Train.npy"), os.path.join(DATA, "SST_Test.npy")]
_, out = surge(["train", deck("podlstm/noaa_sst.yaml"), "-podlstm_data", ",".join(files), "-podlstm_search", "none", "-podlstm_arch", "I",
                "-podlstm_epochs", "1", "-podlstm_hand_arch", "I", "-podlstm_prefix", "nb", "-train_output", "nb"], w)
with h5py.File(os.path.join(w, "nb.h5"), "r") as f:
    meth = f["scores"].attrs["methods"]
    meth = (meth.decode() if isinstance(meth, bytes) else str(meth)).split(";")
    lead = dict(zip(meth, f["scores/rmse_lead"][:, 0, :]))
    acc = dict(zip(meth, f["scores/acc_lead"][:, 0, :]))
N, K, L, NTR, Y, H = 44219, 5, 8, 427, 365.25, 3
a = np.concatenate([np.load(files[0]), np.load(files[1])], axis=1).T  # [weeks][modes]
t = 7.0 * np.arange(len(a))
s0, nte = NTR - L, len(a) - NTR - L + 1
check(nte == 1480 and len(a) == 1914, f"the paper's split: 427 + 1487 weeks, {nte} test windows of 8 -> 8")
S = s0 + np.arange(nte)  # window starts: inputs s .. s+7, targets s+8 .. s+15


def harm(tt):
    tt = np.atleast_1d(tt)
    return np.column_stack([np.ones_like(tt)] + [f(2 * np.pi * i * tt / Y) for i in range(1, H + 1) for f in (np.cos, np.sin)])


C = np.linalg.lstsq(harm(t[:NTR]), a[:NTR], rcond=None)[0]
clim = harm(t) @ C
anom = a - clim


def score(fc):
    """fc [nte][L][K] -> (error beyond the floor in degC per lead, anomaly correlation per lead)"""
    truth = np.stack([a[S + L + l] for l in range(L)], axis=1)
    c = np.stack([clim[S + L + l] for l in range(L)], axis=1)
    e = np.sqrt(np.mean(np.sum((fc - truth) ** 2, axis=2), axis=0) / N)
    fa, oa = fc - c, truth - c
    r = np.sum(fa * oa, axis=(0, 2)) / np.sqrt(np.sum(fa ** 2, axis=(0, 2)) * np.sum(oa ** 2, axis=(0, 2)) + 1e-300)
    return e, r


def var_fit(x, p, n):
    G = np.array([np.r_[1.0, np.concatenate([x[tt - j] for j in range(1, p + 1)])] for tt in range(p, n)])
    return np.linalg.lstsq(G, x[p:n], rcond=None)[0]


def var_iter(x, W, p):
    out = np.zeros((nte, L, K))
    for i, s in enumerate(S):
        hist = list(x[s:s + L])
        for l in range(L):
            hist.append(np.r_[1.0, np.concatenate([hist[-j] for j in range(1, p + 1)])] @ W)
            out[i, l] = hist[-1]
    return out


scale = np.sqrt(K / N)  # surge's RMSE over 5 entries -> the field error beyond the floor
ref = {}
ref["persistence"] = score(np.repeat(a[S + L - 1][:, None, :], L, axis=1))
ref["climatology (3 annual harmonics)"] = score(np.stack([clim[S + L + l] for l in range(L)], axis=1))
vn = [m for m in meth if m.startswith("VAR(")][0]
p = int(vn[4:vn.index(")")])
ref[vn] = score(var_iter(a, var_fit(a, p, NTR), p))
ln = [m for m in meth if m.startswith("LIM: climatology + VAR(")][0]
pl = int(ln.split("VAR(")[1].split(")")[0])
ref[ln] = score(var_iter(anom, var_fit(anom, pl, NTR), pl) + np.stack([clim[S + L + l] for l in range(L)], axis=1))
fm = np.zeros((nte, L, K))
for l in range(L):
    tr = np.arange(0, NTR - 2 * L + 1)
    X = np.column_stack([np.ones(len(tr))] + [anom[tr + j] for j in range(L)] + [harm(t[tr + L + l])[:, 1:]])
    Wl = np.linalg.lstsq(X, anom[tr + L + l], rcond=None)[0]
    Xt = np.column_stack([np.ones(nte)] + [anom[S + j] for j in range(L)] + [harm(t[S + L + l])[:, 1:]])
    fm[:, l] = Xt @ Wl + clim[S + L + l]
ref["LIM: map of anomalies + season"] = score(fm)
check(np.all(lead["POD truth (the floor)"] < 1e-9), "the POD floor is 0: 5 modes of a 5-entry series")
for m, (e, r) in ref.items():
    tol = 1e-9 if m in ("persistence", "climatology (3 annual harmonics)") else 1e-7
    de = np.max(np.abs(lead[m] * scale - e) / e)
    check(de < tol, f"{m}: error beyond the floor by lead {np.round(e, 4).tolist()} degC equals numpy's (max rel. diff {de:.1e} < {tol:.0e})")
    if m.startswith("climatology"):
        check(np.all(acc[m] == 0), "climatology: anomaly correlation 0 (no anomaly forecast)")
    else:
        dr = np.max(np.abs(acc[m] - r))
        check(dr < tol, f"{m}: anomaly correlation by lead {np.round(r, 4).tolist()} equals numpy's (max diff {dr:.1e})")
line = [ln for ln in out.splitlines() if ln.startswith("podlstm:   LIM: climatology + VAR(")]
check(len(line) >= 2, "the run prints the baselines by lead (a table of errors and one of anomaly correlations)")

# refused data
np.save(os.path.join(w, "f32.npy"), np.load(files[0]).astype(np.float32))
np.save(os.path.join(w, "m4.npy"), np.load(files[1])[:4])
for bad, want in [([os.path.join(w, "f32.npy"), files[1]], "float64 array [modes][steps]"), ([files[0], os.path.join(w, "m4.npy")], "has 4 modes but")]:
    rc, o = surge(["train", deck("podlstm/noaa_sst.yaml"), "-podlstm_data", ",".join(bad), "-podlstm_search", "none", "-train_output", "bad"], w, expect_ok=False)
    lines = [x for x in o.splitlines() if x.startswith("surge: error:")]
    check(rc == 1 and len(lines) == 1 and want in lines[0], f"refused: {lines[0][:140] if lines else o[-300:]}")
print("podlstm NOAA baseline checks passed")
