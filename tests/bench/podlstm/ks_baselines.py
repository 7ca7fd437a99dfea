"""Baselines of the KS study (ks_study.py) on POD coefficient series a [T][K], our own code:

- VAR(p): a_t = c + sum_j B_j a_{t-j}, least squares with surge's tiny ridge (1e-12 trace / columns);
- DMD: a_{t+1} = A a_t, least squares (the exact DMD of the coefficient series: no intercept);
- quadratic regression: a_{t+1} = W [1, a_t, a_{t-1}, a_t (x) a_t (i <= j)], ridge regularised.

iterate(kind, W, hist, H, p) runs a model H steps from the history rows hist (oldest first) and
returns the H forecasts. Verified by tests/regression/podlstm/ks_baselines_test.py (each recovers
a known system of its form exactly)."""
import numpy as np


def var_features(hist, p):
    return np.r_[1.0, np.concatenate([hist[-j] for j in range(1, p + 1)])]


def quad_features(hist):
    x, y = hist[-1], hist[-2]
    iu = np.triu_indices(x.size)
    return np.r_[1.0, x, y, np.outer(x, x)[iu]]


def _lstsq(G, Y, ridge):
    M = G.T @ G
    return np.linalg.solve(M + ridge * np.trace(M) / M.shape[0] * np.eye(M.shape[0]), G.T @ Y)


def var_fit(a, p):
    G = np.array([var_features(a[:t], p) for t in range(p, len(a))])
    return _lstsq(G, a[p:], 1e-12)


def dmd_fit(a):
    return np.linalg.lstsq(a[:-1], a[1:], rcond=None)[0]  # a_{t+1} = a_t @ A (A here is the transpose)


def quad_fit(a, ridge):
    G = np.array([quad_features(a[:t]) for t in range(2, len(a))])
    return _lstsq(G, a[2:], ridge)


def iterate(kind, W, hist, H, p=1):
    h = [np.asarray(r, dtype=float) for r in hist]
    out = []
    for _ in range(H):
        if kind == "var":
            nxt = var_features(h, p) @ W
        elif kind == "dmd":
            nxt = h[-1] @ W
        else:
            nxt = quad_features(h) @ W
        h.append(nxt)
        out.append(nxt)
    return np.array(out)
