"""Independent check of the descriptor statistics (davg/dstd) that `surge train` stores, computed here
with numpy from the training data as DeePMD-kit's EnvMatStatSe does (deepmd/dpmodel/utils/env_mat_stat.py,
read, not copied): per centre type, over every centre of that type in the first STAT_FRAMES frames, all
sum(sel) slots of its environment matrix count -- padding slots and excluded type pairs as zero rows --
giving the radial mean and std (column 0) and one std pooled over the three angular columns (mean 0);
a std below 1e-2 becomes 1e-2. Rows: s(r)/r and s(r) x/r^2 with DeePMD-kit's C^2 switch s.
Neighbours by brute force over periodic images (no cell lists, no sorting: the sums do not depend on
the slot order when no section overflows, which surge refuses).
  stats_check.py MODEL.h5 DATA.h5 STAT_FRAMES     exit 0 when davg/dstd agree to 1e-12 relative"""
import sys
import itertools
import h5py
import numpy as np


def switch(r, rs, rc):
    u = (r - rs) / (rc - rs)
    return np.where(r < rs, 1.0, np.where(r < rc, u**3 * (-6 * u**2 + 15 * u - 10) + 1, 0.0))


def main(model, data, nstat):
    m, d = h5py.File(model, "r"), h5py.File(data, "r")
    rc, rs = float(m.attrs["rcut"]), float(m.attrs["rcut_smth"])
    sel = np.atleast_1d(m.attrs["sel"]).astype(int)
    ex = np.atleast_1d(m.attrs["exclude_types"]).astype(int).reshape(-1, 2) if "exclude_types" in m.attrs else np.zeros((0, 2), int)
    excl = {(int(a), int(b)) for a, b in ex} | {(int(b), int(a)) for a, b in ex}
    T, nnei = len(sel), int(sel.sum())
    typ = d["static/type"][()].astype(int)
    X, B = d["samples/coord"][()], d["samples/box"][()]
    sr, sr2, sa, sa2, n = (np.zeros(T) for _ in range(5))
    for f in range(min(int(nstat), len(X))):
        x, box = X[f].reshape(-1, 3), B[f].reshape(3, 3)
        periodic = np.abs(box).sum() > 0
        if periodic:
            x = (x @ np.linalg.inv(box)) % 1.0 @ box  # wrapped into the cell, as surge's and DeePMD-kit's image builders do
            h = np.abs(np.linalg.det(box)) / np.linalg.norm(np.cross(box[[1, 2, 0]], box[[2, 0, 1]]), axis=1)
            k = np.ceil(rc / h).astype(int)
            shifts = np.array([s for s in itertools.product(*(range(-q, q + 1) for q in k))]) @ box
        else:
            shifts = np.zeros((1, 3))
        for i in range(len(x)):
            ti = typ[i]
            dd = (x[None, :, :] + shifts[:, None, :] - x[i]).reshape(-1, 3)
            tj = np.tile(typ, len(shifts))
            r = np.linalg.norm(dd, axis=1)
            keep = (r > 0) & (r < rc) & np.array([(ti, t) not in excl for t in tj])
            dd, r = dd[keep], r[keep]
            s = switch(r, rs, rc)
            R0, Ra = s / r, (s / r**2)[:, None] * dd
            sr[ti] += R0.sum()
            sr2[ti] += (R0**2).sum()
            sa[ti] += Ra.sum() / 3
            sa2[ti] += (Ra**2).sum() / 3
            n[ti] += nnei
    std = lambda s2, s1, c: np.maximum(np.sqrt(np.maximum(s2 / c - (s1 / c) ** 2, 0)), 1e-2)
    davg = np.zeros((T, 4))
    davg[:, 0] = sr / n
    dstd = np.stack([std(sr2, sr, n)] + [std(sa2, sa, n)] * 3, 1)
    gavg, gstd = m["davg"][()][:T], m["dstd"][()][:T]
    ea = np.abs(gavg - davg).max() / np.abs(davg).max()
    es = np.abs(gstd - dstd).max() / np.abs(dstd).max()
    print(f"  davg/dstd of {model} vs numpy (DeePMD-kit's EnvMatStatSe rule, {int(nstat)} frames, exclusions {sorted(excl)}): "
          f"davg rel {ea:.1e}, dstd rel {es:.1e} (tol 1e-12)")
    return ea < 1e-12 and es < 1e-12


if __name__ == "__main__":
    sys.exit(0 if main(*sys.argv[1:4]) else 1)
