#!/usr/bin/env python3
"""The KS study's own baselines (tests/bench/podlstm/ks_baselines.py), < 1 s: each recovers a known
system of its form from a trajectory of it, and iterates it as the system does.

1. VAR(2): a_t = c + B1 a_{t-1} + B2 a_{t-2} + noise (K = 3, 4000 steps, a stable random system):
   the fitted [c, B1, B2] equal the true ones to 1e-9 without noise (its first 60 steps), and to 0.05 with unit noise
   (the least-squares error ~ 1/sqrt(4000) = 0.016; 0.05 is 3 standard errors);
2. DMD: a_{t+1} = A a_t (a rotation damped by 0.99, K = 4): the fitted A equals the true one to 1e-10;
3. the quadratic regression: a_{t+1} = c + B a_t + C a_{t-1} + Q (a_t (x) a_t) (a map of K = 2 states
   with every kind of term, chaotic but bounded: the Henon map as a delay map driving a contracting
   second state): the fitted map equals the true one to 1e-8 (ridge 1e-14);
4. iterate: 20 steps of each fitted model from the trajectory's first rows equal the trajectory to
   1e-8 (VAR and DMD without noise, the quadratic map: a chaotic map loses ~1 digit a step, so 20
   steps of a map recovered to 1e-12 stay within 1e-8 only while the Lyapunov growth allows: checked
   over 10 steps)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "podlstm"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
from ks_baselines import dmd_fit, iterate, quad_features, quad_fit, var_fit  # noqa: E402
from surgetest import check  # noqa: E402

rng = np.random.default_rng(7)
K, T = 3, 4000
c = rng.normal(size=K)
B1 = 0.5 * np.linalg.qr(rng.normal(size=(K, K)))[0]
B2 = 0.3 * np.linalg.qr(rng.normal(size=(K, K)))[0]


def var_traj(noise):
    a = np.zeros((T, K))
    a[:2] = rng.normal(size=(2, K))
    for t in range(2, T):
        a[t] = c + B1 @ a[t - 1] + B2 @ a[t - 2] + noise * rng.normal(size=K)
    return a


Wtrue = np.vstack([c, B1.T, B2.T])  # rows: 1, a_{t-1}, a_{t-2}: a_t = features @ W
a = var_traj(0.0)
W = var_fit(a[:60], 2)  # before the trajectory settles on its fixed point (the fit is then degenerate)
check(np.max(np.abs(W - Wtrue)) < 1e-9, f"VAR(2) recovered without noise: {np.max(np.abs(W - Wtrue)):.1e} < 1e-9")
P = iterate("var", W, a[:2], 20, 2)
check(np.max(np.abs(P - a[2:22])) < 1e-8, f"VAR(2) iterated 20 steps equals the trajectory: {np.max(np.abs(P - a[2:22])):.1e}")
Wn = var_fit(var_traj(1.0), 2)
check(np.max(np.abs(Wn - Wtrue)) < 0.05, f"VAR(2) recovered with unit noise: {np.max(np.abs(Wn - Wtrue)):.3f} < 0.05")

th = 0.3
A = 0.99 * np.eye(4)
A[:2, :2] = 0.99 * np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
A[2:, 2:] = 0.95 * np.array([[np.cos(2 * th), -np.sin(2 * th)], [np.sin(2 * th), np.cos(2 * th)]])
b = np.zeros((200, 4))
b[0] = rng.normal(size=4)
for t in range(1, 200):
    b[t] = A @ b[t - 1]
Af = dmd_fit(b).T
check(np.max(np.abs(Af - A)) < 1e-10, f"DMD recovers A: {np.max(np.abs(Af - A)):.1e} < 1e-10")
P = iterate("dmd", Af.T, b[:1], 20)
check(np.max(np.abs(P - b[1:21])) < 1e-10, "DMD iterated 20 steps equals the trajectory")

# a bounded chaotic quadratic map of 2 states with lag terms: x' = 1 - 1.4 x^2 + 0.3 x_{-1} (the Henon map
# as a delay map), z' = 0.4 z + 0.3 x^2 - 0.2 z_{-1} + 0.1 x z (driven by x, contracting)
Wq = np.zeros((1 + 2 + 2 + 3, 2))   # rows: 1, x, z, x_{-1}, z_{-1}, x x, x z, z z
Wq[0, 0] = 1.0
Wq[3, 0] = 0.3
Wq[5, 0] = -1.4
Wq[2, 1] = 0.4
Wq[5, 1] = 0.3
Wq[4, 1] = -0.2
Wq[6, 1] = 0.1
q = np.zeros((3000, 2))
q[:2] = [[0.1, 0.2], [0.2, -0.1]]
for t in range(2, 3000):
    q[t] = quad_features(q[:t]) @ Wq
check(np.all(np.isfinite(q)) and np.std(q[1000:, 0]) > 0.3, "the quadratic test map is bounded and not settled")
Wf = quad_fit(q, 1e-14)
check(np.max(np.abs(Wf - Wq)) < 1e-8, f"the quadratic regression recovers the map: {np.max(np.abs(Wf - Wq)):.1e} < 1e-8")
P = iterate("quad", Wf, q[:2], 10)
check(np.max(np.abs(P - q[2:12])) < 1e-8, f"the quadratic regression iterated 10 steps equals the trajectory: {np.max(np.abs(P - q[2:12])):.1e}")
