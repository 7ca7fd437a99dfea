#!/usr/bin/env python3
"""physics/sst verification (docs/sst.md), ~15 s:

1. rigid rotation of cos(2 lon) cos^2(lat) once around the sphere (kappa 0): max error against the
   exact solution on 18x9 .. 144x72 cells falls at second order (each halving of the cell >= 3.4x);
2. diffusion of Y_1^0 = sin(lat) on an ocean planet: measured decay rate against 2 kappa / a^2,
   relative error falling at second order (>= 3.6x per halving) and below 2e-3 on 72x36;
3. full physics with continents (gyres, relaxation, weather, ENSO): the discrete divergence of the
   flow is round-off (< 1e-15 /day) and the heat budget closes to round-off (relative < 1e-12:
   the change of sum(area T) equals the time integral of the sources);
4. the same run on 1 and 2 ranks: identical T field (the per-cell arithmetic does not depend on the
   decomposition; tolerance 0) and diagnostics equal to 1e-12 relative (sums in another order);
5. restart: 2 years straight equal 1 year + a restart for 1 year, bit for bit (stochastic state in
   the checkpoint);
6. inputs/sst/ensemble_small.yaml through surge ensemble: a field_snapshots dataset of 2 x 157 weekly T
   snapshots [36, 72] equal to the members' outputs;
7. the nonlinear recharge oscillator of the ENSO index (enso: recharge): without noise, from T = 2 K,
   the index equals scipy's solution of the same ODE (seasonal growth rate, quadratic and cubic
   terms; rtol 1e-10) to first order in the step (Euler-Maruyama: error ratio 2 +- 0.2 per halving,
   below 4e-3 K at dt = 0.25 day, on a swing of 3 K); with noise, 200 years: the variance of T peaks in boreal winter
   (std over Nov-Jan at least 1.5 x that over May-Jul: seasonal phase locking); full physics with it
   identical on 1 and 2 ranks and across a restart (bit for bit)."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from surgetest import check, deck, diagnostics, fail, last_field, report, same_arrays, surge, workdir  # noqa: E402

w = workdir("sst")
H = deck("sst/harmonic.yaml")


def order(errs):
    return [errs[i] / errs[i + 1] for i in range(len(errs) - 1)]


# 1. rotation
errs = []
for n in ((18, 9), (36, 18), (72, 36), (144, 72)):
    out = f"rot{n[0]}"
    surge(["run", H, "-sst_cells", f"{n[0]},{n[1]}", "-sim_output", out, "-sim_progress_every", "100000"], w)
    errs.append(diagnostics(os.path.join(w, out + ".h5"))["exact_error"][-1])
r = order(errs)
print("rotation max errors", errs, "ratios", r)
check(all(x >= 3.4 for x in r[1:]) and r[0] > 2.5, f"rigid rotation converges at second order (error ratios {np.round(r, 2)})")
check(errs[-1] < 0.02, f"one revolution on 144x72 cells: max error {errs[-1]:.3g} < 0.02 of the amplitude 1")

# 2. diffusion of sin(lat)
rel = []
for n in ((18, 9), (36, 18), (72, 36)):
    out = f"dif{n[0]}"
    surge(["run", H, "-sst_cells", f"{n[0]},{n[1]}", "-sst_flow", "none", "-sst_kappa", "10000", "-sst_harmonic_m", "0", "-sim_t_end", "500", "-sim_output", out, "-sim_progress_every", "100000"], w)
    rate = report(os.path.join(w, out + ".h5"), "decay_rate")
    rel.append(abs(rate[0] - rate[1]) / rate[1])
r = order(rel)
print("decay-rate relative errors", rel, "ratios", r)
check(all(x >= 3.6 for x in r), f"decay rate of sin(lat) converges to 2 kappa/a^2 at second order (ratios {np.round(r, 2)})")
check(rel[-1] < 2e-3, f"decay rate on 72x36 within {rel[-1]:.2e} < 2e-3 of theory")

# 3. + 4. full physics on a coarse grid, 1 and 2 ranks
args = ["run", deck("sst/small.yaml"), "-sim_t_end", "364", "-sim_progress_every", "100000", "-sst_seed", "5"]
surge(args + ["-sim_output", "full1"], w)
surge(args + ["-sim_output", "full2"], w, ranks=2)
f1, f2 = os.path.join(w, "full1.h5"), os.path.join(w, "full2.h5")
div = report(f1, "max_divergence")[0]
bud = report(f1, "budget_relative")[0]
check(div < 1e-15, f"divergence of the gyre flow is round-off: {div:.2e} /day")
check(abs(bud) < 1e-12, f"heat budget closes to round-off: relative residual {bud:.2e}")
d1, d2 = diagnostics(f1), diagnostics(f2)
check(np.ptp(d1["enso"]) > 0.5 and np.std(d1["mean"]) > 0.05, "the run is forced (ENSO index and mean temperature vary)")
T1, T2 = last_field(f1, "T"), last_field(f2, "T")
check(T1.shape == (36, 72) and np.array_equal(T1, T2), "T after one year identical on 1 and 2 ranks (bit for bit)")
for k in ("mean", "heat", "enso"):
    e = np.max(np.abs(d1[k] - d2[k]) / np.maximum(np.abs(d1[k]), 1e-300))
    check(e < 1e-12, f"diagnostic {k} on 1 vs 2 ranks: max relative difference {e:.1e} < 1e-12")

# 5. restart
args = ["run", deck("sst/small.yaml"), "-sim_progress_every", "100000"]
surge(args + ["-sim_t_end", "728", "-sim_output", "straight"], w)
surge(args + ["-sim_t_end", "364", "-sim_output", "part"], w)
surge(args + ["-sim_t_end", "728", "-sim_output", "part", "-restart", "part.chk.h5"], w)
a, b = diagnostics(os.path.join(w, "straight.h5")), diagnostics(os.path.join(w, "part.h5"))
check(same_arrays(a, b), "restart after one year: every diagnostic identical to the straight run")
check(np.array_equal(last_field(os.path.join(w, "straight.h5"), "T"), last_field(os.path.join(w, "part.h5"), "T")), "restart: final T bit for bit")

# 6. the small dataset through surge ensemble
surge(["ensemble", deck("sst/ensemble_small.yaml")], w)
with h5py.File(os.path.join(w, "sst_small.h5"), "r") as f:
    n = int(f.attrs["nsamples"])
    T = f["samples/T"][:n]
    mem = f["samples/member"][:n]
    tt = f["samples/time"][:n]
check(n == 2 * 157 and T.shape[1:] == (36, 72), f"ensemble dataset: {n} samples of {T.shape[1:]}")
check(np.allclose(np.diff(tt[:157]), 7.0, rtol=0, atol=1e-9), "snapshots are weekly (7 days apart)")
with h5py.File(os.path.join(w, "sst_small.members", "member_00001.h5"), "r") as f:
    last = f["fields/T"][str(156)][()]
check(np.array_equal(T[mem == 1][-1], last), "the dataset's last sample of member 1 equals its output")
check(not np.array_equal(T[156], T[313]), "the two members (seeds) differ")

# 7. the recharge oscillator
from scipy.integrate import solve_ivp  # noqa: E402

ro = ["-sst_enso", "recharge", "-sst_cells", "18,9", "-sst_land", "none", "-sim_progress_every", "1000000", "-sim_field_every", "1000000000"]
det = ro + ["-sst_enso_sigma_t", "0", "-sst_enso_sigma_h", "0", "-sst_enso_spinup", "0", "-sst_enso_init", "2"]
mo, yr = 365.25 / 12, 365.25
R0, Ra, peak, F1, F2, eps, bT, cT, bh = 0.05, 0.16, 250, 0.14, 0.16, 0.13, 0.02, 0.001, 0.03


def rhs(t, y):
    T, h = y
    R = R0 + Ra * np.cos(2 * np.pi * (t - peak) / yr)
    return [(R * T + F1 * h + bT * T * T - cT * T ** 3) / mo, (-eps * h - F2 * T - bh * T * T) / mo]


errs = []
for dt, every in ((1.0, 4), (0.5, 8), (0.25, 16)):
    out = f"ro{every}"
    surge(["run", deck("sst/small.yaml")] + det + ["-sim_dt", str(dt), "-sim_t_end", "1096", "-sim_diag_every", str(every), "-sim_output", out], w)
    d = diagnostics(os.path.join(w, out + ".h5"))
    ref = solve_ivp(rhs, (0, 1096), [2.0, 0.0], t_eval=d["time"], rtol=1e-10, atol=1e-12).y[0]
    errs.append(np.max(np.abs(d["enso"] - ref)))
r = order(errs)
print("recharge oscillator max errors", errs, "ratios", r, "range of T", np.ptp(ref))
check(np.ptp(ref) > 2 and all(1.8 <= x <= 2.2 for x in r) and errs[-1] < 4e-3, f"recharge oscillator without noise = scipy's ODE solution to first order (errors {np.round(errs, 6)} K, ratios {np.round(r, 3)})")
surge(["run", deck("sst/small.yaml")] + ro + ["-sim_dt", "1", "-sim_t_end", str(200 * yr), "-sim_diag_every", "7", "-sim_output", "ro200"], w)
d = diagnostics(os.path.join(w, "ro200.h5"))
mon = ((d["time"] % yr) / mo).astype(int)
sd = np.array([np.std(d["enso"][mon == k]) for k in range(12)])
check(sd[[10, 11, 0]].mean() >= 1.5 * sd[[4, 5, 6]].mean(), f"phase locking: std of T by month {np.round(sd, 2)} (Nov-Jan {sd[[10, 11, 0]].mean():.2f} K, May-Jul {sd[[4, 5, 6]].mean():.2f} K)")
args = ["run", deck("sst/small.yaml"), "-sst_enso", "recharge", "-sim_progress_every", "100000", "-sst_seed", "5"]
surge(args + ["-sim_t_end", "728", "-sim_output", "rostraight"], w)
surge(args + ["-sim_t_end", "728", "-sim_output", "ro2"], w, ranks=2)
surge(args + ["-sim_t_end", "364", "-sim_output", "ropart"], w)
surge(args + ["-sim_t_end", "728", "-sim_output", "ropart", "-restart", "ropart.chk.h5"], w)
Ts = last_field(os.path.join(w, "rostraight.h5"), "T")
check(np.array_equal(Ts, last_field(os.path.join(w, "ro2.h5"), "T")), "recharge ENSO: T after two years identical on 1 and 2 ranks")
check(np.array_equal(Ts, last_field(os.path.join(w, "ropart.h5"), "T")), "recharge ENSO: restart after one year, final T bit for bit")
print("sst verification passed")
