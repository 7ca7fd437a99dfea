#!/usr/bin/env python3
"""How much can a nonlinear forecast gain over a linear one on the sst model's recharge-oscillator ENSO
index (physics/sst/sst_enso.c, enso: recharge, its default parameters)? An independent numpy
integration of the same stochastic ODE (Euler-Maruyama, 1-day steps, 3000 years after 50 of spin-up),
sampled weekly; the index T is forecast 1..8 weeks ahead from its last 8 weekly values by least
squares on
  lin    the 8 values (what VAR sees of this index)
  nl     + T^2, T^3 of the last value, + the calendar (cos, sin of the phase of the year) and its
         products with the last two values (seasonal growth rate: phase locking)
fitted either on 1500 years ("unlimited data") or on 427 weeks (the POD-LSTM training period), and
scored on the other 1500 years. Prints the test RMSE (K) by lead. Usage: enso_oracle.py [seed]"""
import sys

import numpy as np

# the defaults of physics/sst (sst_enso.c): rates per month, the year 365.25 days
R0, RA, F1, F2, EPS, BT, CT, BH, ST, SH, B, PEAK, YEAR = 0.05, 0.16, 0.14, 0.16, 0.13, 0.02, 0.001, 0.03, 0.2, 0.2, 0.4, 250.0, 365.25
rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
DT, YEARS, SPIN = 1.0, 3000, 50
n = int((YEARS + SPIN) * YEAR / DT)
a = DT / (YEAR / 12)
z = rng.standard_normal((n, 2)) * np.sqrt(a)
T, h = 0.0, 0.0
week = []
for k in range(n):
    t = k * DT - SPIN * YEAR
    R = R0 + RA * np.cos(2 * np.pi * (t - PEAK) / YEAR)
    T, h = (T + a * (R * T + F1 * h + BT * T * T - CT * T ** 3) + ST * z[k, 0] * (1 + (B * T if T > 0 else 0)),
            h + a * (-EPS * h - F2 * T - BH * T * T) + SH * z[k, 1])
    if t >= 0 and k % 7 == 0:
        week.append((t, T))
tw, x = np.array(week).T
skew = ((x - x.mean()) ** 3).mean() / x.std() ** 3
print(f"recharge oscillator, {YEARS} years weekly: std {x.std():.3f} K, skewness {skew:.3f}, max {x.max():.2f}, min {x.min():.2f}")
L = 8


def windows(i0, i1):
    idx = np.arange(i0 + L, i1 - L + 1)
    X = np.stack([x[i - L:i] for i in idx])
    Y = np.stack([x[i:i + L] for i in idx])
    return X, Y, tw[idx]


def feats(X, S, kind):
    cols = [np.ones(len(X)), *X.T]
    if kind == "nl":
        c, s = np.cos(2 * np.pi * S / YEAR), np.sin(2 * np.pi * S / YEAR)
        cols += [X[:, -1] ** 2, X[:, -1] ** 3, c, s, c * X[:, -1], s * X[:, -1], c * X[:, -2], s * X[:, -2]]
    return np.array(cols).T


half = len(x) // 2
Xte, Yte, Ste = windows(half, len(x))
print("fit on                 features  test RMSE (K): lead 1   lead 4   lead 8   all")
for label, (i0, i1) in (("1500 years", (0, half)), ("427 weeks", (0, 427 + 2 * L))):
    Xtr, Ytr, Str = windows(i0, i1)
    for kind in ("lin", "nl"):
        W = np.linalg.lstsq(feats(Xtr, Str, kind), Ytr, rcond=None)[0]
        e = feats(Xte, Ste, kind) @ W - Yte
        r = np.sqrt((e ** 2).mean(0))
        print(f"{label:22s} {kind:8s}  {r[0]:20.4f} {r[3]:8.4f} {r[7]:8.4f} {np.sqrt((e ** 2).mean()):8.4f}")
