#!/usr/bin/python3
"""MeshfreeFlowNet's evaluation against the fine solution (figures, not pass/fail; docs/mffn.md
"Evaluation"). Run by eval.sh in this folder, which makes the data and trains the models first.

  eval.py WORK [--plot | --plot-docs] [--project]

WORK holds the held-out datasets (rb6_valid.h5: Ra = 1e6, seeds 31-32; rb6_ra5e5.h5: Ra = 5e5, seeds
41-42; the training seeds are 7-12) and the model files (mffn*.h5, unet.h5). For every model this
script has test_bench_mffn_eval predict the whole held-out domain (every fine snapshot of every run,
from windows of 4 low-res snapshots: every 4th snapshot, z row and x column; mffn through the
field.superres provider, the U-Net through its sub-pixel head) and computes here, for them and for
trilinear interpolation of the same low-res data (numpy, periodic in x), against the fine truth:

  fields     NMAE = mean |pred - truth| / (max - min of the truth) and R^2 = 1 - SS_res / SS_tot,
             per channel (p, b, u, w), physical units;
  statistics per snapshot, then over the snapshots: relative error mean_t |s - s_true| / mean_t |s_true|
             of the kinetic energy 1/2 <u^2 + w^2>, the viscous dissipation nu <|grad u|^2 + |grad w|^2>,
             the thermal dissipation kappa <|grad b|^2> and the Nusselt number 1 + Lz <w b> / kappa;
             the KE spectrum in x (z-mean of |u_m|^2 + |w_m|^2): mean_t sum_m |E - E_true| / mean_t sum_m E_true
             (normalised by its time mean as the other statistics; "spec/snap": normalised per snapshot,
             mean_t (sum_m |E - E_true| / sum_m E_true), which weighs the resting fluid before the onset,
             KE 1e-6 .. 1e-4 of the developed flow's, as much as the convection);
  PDE        mean |residual| of b transport, x-, z-momentum and continuity (free-fall units), every
             derivative by second-order finite differences on the fine grid (central in x, periodic;
             np.gradient in z and t, 0.25 apart) for every method alike, and for the truth itself
             (the floor the differences leave on the exact solution).

--project adds, for every method, its answer with u, w projected onto divergence-free fields
(method name + "+proj"; test_bench_mffn_eval project: SgMFFNProjector, what `mffn project` applies to
the served field; docs/mffn.md "Projecting the velocity"), so that the projection's effect is seen
on every method alike, trilinear interpolation and the U-Net included.

Region: every fine point inside the low-res hull in z (rows 0 .. 60 of 64: the rows above the last
low-res row are no method's training ground) and every x column, every snapshot but t = 0 (the
initial grid-scale noise, which no method can recover from every 4th point). Derivatives use rows
0 .. 60 only. Writes WORK/eval.json and, with --plot, WORK/mffn_eval.png (per set: spectra, Nu(t),
errors relative to trilinear; the unprojected answers only); --plot-docs writes that figure as
docs/mffn_eval.png, the one docs/mffn.md shows."""
import json
import os
import subprocess
import sys

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EVAL = os.path.join(ROOT, "build", "tests", "test_bench_mffn_eval")
LX, LZ, F = 4.0, 1.0, 4  # the box and the subsampling factor (t, z, x alike)
CH = "pbuw"
NZ = 64  # rows of the data (set from the data in main)


def load(path):
    with h5py.File(path, "r") as f:
        s = f["samples"]
        return {c: s[c][()] for c in CH}, s["time"][()], s["member"][()]


def runs(time, member):
    """[(first, length)] of the member runs (consecutive samples of one member, increasing time)"""
    out, s = [], 0
    for i in range(1, len(time) + 1):
        if i == len(time) or member[i] != member[i - 1] or not time[i] > time[i - 1]:
            out.append((s, i - s))
            s = i
    return out


def trilinear(truth, rr):
    """trilinear interpolation of every F-th snapshot, row and column: linear in t and z, periodic in x"""
    out = {}
    for c in CH:
        v = truth[c]
        res = np.full_like(v, np.nan)
        for s, n in rr:
            lo = v[s:s + n:F, ::F, ::F]                     # [T, Z, X]
            j = np.arange(n) / F
            i0 = np.minimum(np.floor(j).astype(int), lo.shape[0] - 2)
            a = (j - i0)[:, None, None]
            vt = (1 - a) * lo[i0] + a * lo[i0 + 1]          # [n, Z, X]
            k = np.arange(F * (lo.shape[1] - 1) + 1) / F
            k0 = np.minimum(np.floor(k).astype(int), lo.shape[1] - 2)
            b = (k - k0)[None, :, None]
            vz = (1 - b) * vt[:, k0] + b * vt[:, k0 + 1]    # [n, rows, X]
            x = np.arange(v.shape[2]) / F
            x0 = np.floor(x).astype(int)
            e = (x - x0)[None, None, :]
            res[s:s + n, :vz.shape[1]] = (1 - e) * vz[:, :, x0 % lo.shape[2]] + e * vz[:, :, (x0 + 1) % lo.shape[2]]
        out[c] = res
    return out


def predicted(path, shape):
    a = np.fromfile(path, dtype=np.float64).reshape(shape[0], 4, shape[1], shape[2])
    return {c: a[:, i] for i, c in enumerate(CH)}


def projected(work, m, name, pred, shape, rows):
    """m's prediction with u, w projected (rows 0 .. rows - 1) by test_bench_mffn_eval project; the
    projected file WORK/m.name.proj.f64 is kept and redone when the prediction is newer"""
    src, dst = os.path.join(work, f"{m}.{name}.f64"), os.path.join(work, f"{m}.{name}.proj.f64")
    if m == "trilinear":
        np.stack([pred[c] for c in CH], axis=1).astype(np.float64).tofile(src)
    if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(src):
        subprocess.run([EVAL, "project", src, dst, *map(str, (*shape, rows, LZ, LX))], check=True)
    if m == "trilinear":
        os.remove(src)
    return predicted(dst, shape)


def derivs(v, dt, rows):
    """d/dt, d/dz, d/dx, d2/dz2, d2/dx2 on [n, rows, nx] (uniform grid, x periodic)"""
    dz, dx = LZ / NZ, LX / v.shape[2]
    vx = (np.roll(v, -1, 2) - np.roll(v, 1, 2)) / (2 * dx)
    vxx = (np.roll(v, -1, 2) - 2 * v + np.roll(v, 1, 2)) / dx ** 2
    vz = np.gradient(v, dz, axis=1)
    vzz = np.gradient(vz, dz, axis=1)
    vt = np.gradient(v, dt, axis=0) if v.shape[0] > 1 else np.zeros_like(v)
    return vt, vz, vx, vzz, vxx


def statistics(f, rr, keep, nu, kappa, dt, rows):
    """per-snapshot KE, dissipations, Nu, spectrum; mean |PDE residuals| over the kept snapshots"""
    st = {k: [] for k in ("ke", "eps_v", "eps_t", "nu")}
    spec, res, nres = [], np.zeros(4), 0
    for s, n in rr:
        v = {c: f[c][s:s + n, :rows] for c in CH}
        d = {c: derivs(v[c], dt, rows) for c in CH}
        k = keep[s:s + n]
        u, w, b = v["u"], v["w"], v["b"]
        st["ke"].append(0.5 * np.mean(u ** 2 + w ** 2, axis=(1, 2))[k])
        st["eps_v"].append(nu * np.mean(d["u"][1] ** 2 + d["u"][2] ** 2 + d["w"][1] ** 2 + d["w"][2] ** 2, axis=(1, 2))[k])
        st["eps_t"].append(kappa * np.mean(d["b"][1] ** 2 + d["b"][2] ** 2, axis=(1, 2))[k])
        st["nu"].append((1 + LZ * np.mean(w * b, axis=(1, 2)) / kappa)[k])
        uh, wh = np.fft.rfft(u, axis=2), np.fft.rfft(w, axis=2)
        spec.append((np.mean(np.abs(uh) ** 2 + np.abs(wh) ** 2, axis=1) / u.shape[2] ** 2)[k])
        (bt, bz, bx, bzz, bxx), (ut, uz, ux, uzz, uxx), (wt, wz, wx, wzz, wxx) = d["b"], d["u"], d["w"]
        px, pz = d["p"][2], d["p"][1]
        r = [bt + u * bx + w * bz - kappa * (bxx + bzz), ut + u * ux + w * uz + px - nu * (uxx + uzz),
             wt + u * wx + w * wz + pz - b - nu * (wxx + wzz), ux + wz]
        res += np.array([np.abs(q[k]).sum() for q in r])
        nres += k.sum() * u.shape[1] * u.shape[2]
    out = {k: np.concatenate(v) for k, v in st.items()}
    out["spec"] = np.concatenate(spec)
    out["pde"] = res / nres
    return out


def compare(pred, truth, st_pred, st_true, mask):
    e = {}
    for c in CH:
        t, p = truth[c][mask], pred[c][mask]
        e["nmae_" + c] = float(np.mean(np.abs(p - t)) / (t.max() - t.min()))
        e["r2_" + c] = float(1 - np.sum((p - t) ** 2) / np.sum((t - t.mean()) ** 2))
    for k in ("ke", "eps_v", "eps_t", "nu"):
        e["rel_" + k] = float(np.mean(np.abs(st_pred[k] - st_true[k])) / np.mean(np.abs(st_true[k])))
    err, tot = np.abs(st_pred["spec"] - st_true["spec"]).sum(1), st_true["spec"].sum(1)
    e["rel_spec"] = float(np.mean(err) / np.mean(tot))
    e["rel_spec_snap"] = float(np.mean(err / tot))
    e["pde"] = [float(x) for x in st_pred["pde"]]
    return e


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    work = os.path.abspath(sys.argv[1])
    if not os.path.exists(EVAL):
        sys.exit("eval.py: build/tests/test_bench_mffn_eval is missing: make tests")
    models = sorted(m[:-3] for m in os.listdir(work) if m.endswith(".h5") and (m.startswith("mffn") or m.startswith("unet")) and "ckpt" not in m)
    sets = [("Ra1e6_heldout", "rb6_valid.h5", 1e6), ("Ra5e5", "rb6_ra5e5.h5", 5e5)]
    result, panels = {"models": models, "sets": {}}, {}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    for name, data, ra in sets:
        path = os.path.join(work, data)
        if not os.path.exists(path):
            sys.exit(f"eval.py: {path} is missing (eval.sh makes it)")
        truth, time, member = load(path)
        rr = runs(time, member)
        n, nz, nx = truth["b"].shape
        global NZ
        NZ = nz
        rows = F * ((nz - 1) // F) + 1
        dt = time[1] - time[0]
        nu = kappa = 1 / np.sqrt(ra)
        keep = time > 0
        mask = np.zeros(truth["b"].shape, bool)
        mask[keep, :rows] = True
        st_true = statistics(truth, rr, keep, nu, kappa, dt, rows)
        preds = {"trilinear": trilinear(truth, rr)}
        for m in models:
            out = os.path.join(work, f"{m}.{name}.f64")
            if not os.path.exists(out):
                kind = "unet" if m.startswith("unet") else "mffn"
                extra = ["-unet_residual"] if kind == "unet" else []
                subprocess.run(["nice", "-n", "5", EVAL, "predict", kind, os.path.join(work, m + ".h5"), path, out, *extra], check=True, env=env)
            preds[m] = predicted(out, (n, nz, nx))
        if "--project" in sys.argv:
            for m in list(preds):
                preds[m + "+proj"] = projected(work, m, name, preds[m], (n, nz, nx), rows)
        res = {"truth_pde": [float(x) for x in st_true["pde"]], "methods": {}}
        stats = {"truth": st_true}
        for m, p in preds.items():
            stats[m] = statistics(p, rr, keep, nu, kappa, dt, rows)
            res["methods"][m] = compare(p, truth, stats[m], st_true, mask)
        result["sets"][name] = res
        print(f"\n== {name} ({data}: {len(rr)} runs x {rr[0][1]} snapshots, Ra {ra:g}; rows 0..{rows - 1} of {nz}, t > 0)")
        cols = [f"nmae_{c}" for c in CH] + [f"r2_{c}" for c in CH]
        print(f"{'method':24s}" + "".join(f"{c:>10s}" for c in cols))
        for m, e in res["methods"].items():
            print(f"{m:24s}" + "".join(f"{e[c]:10.3e}" if c.startswith("nmae") else f"{e[c]:10.5f}" for c in cols))
        cols = ["rel_ke", "rel_eps_v", "rel_eps_t", "rel_nu", "rel_spec", "rel_spec_snap"]
        print(f"{'method':24s}" + "".join(f"{c[4:]:>11s}" for c in cols) + "   mean |PDE residual| (b, x-mom, z-mom, cont)")
        print(f"{'truth (FD floor)':24s}" + " " * 66 + "  " + " ".join(f"{x:.3e}" for x in res["truth_pde"]))
        for m, e in res["methods"].items():
            print(f"{m:24s}" + "".join(f"{e[c]:11.3e}" for c in cols) + "  " + " ".join(f"{x:.3e}" for x in e["pde"]))
        panels[name] = ({m: {k: st[k] for k in ("nu", "spec")} for m, st in stats.items()}, time[keep], rr, keep, res)
    if "--plot" in sys.argv or "--plot-docs" in sys.argv:
        plot(panels, os.path.join(ROOT, "docs") if "--plot-docs" in sys.argv else work)
    json.dump(result, open(os.path.join(work, "eval.json"), "w"), indent=1)
    print(f"\nwrote {os.path.join(work, 'eval.json')}")


def metric(e, k):
    """metric k of one method's entry in eval.json: a key of it, or pde_b, pde_x, pde_z, pde_c"""
    return e["pde"]["bxzc".index(k[4])] if k.startswith("pde_") else e[k]


def style(m):
    """line style and legend label of a method: by its kind and gamma, so that every trained arm is
    drawn (mffn = gamma 0.0125, mffn_g0, mffn_g01 = 0.1, mffn_g03 = 0.3, mffn_g1 = 1, mffn_c24 = 0.0125 with
    the continuity residual weighted 24x, mffn_c24e = that with the dissipation term, mffn_c24et = with the
    thermal one too, mffn_c24etf = the heat-flux one too, mffn_c24vtf and mffn_c24v1tf = the enstrophy term in
    place of the dissipation term, mffn_c24etfg = mffn_c24etf with its correction's gain, mffn_sfe = the
    stream-function decoder with it, unet*, and any other model file's name)"""
    known = {"truth": ("k-", "truth"), "trilinear": ("b:", "trilinear"), "mffn": ("r--", "mffn, gamma 0.0125"),
             "mffn_g0": ("m-", "mffn, gamma 0"), "mffn_g01": ("c-", "mffn, gamma 0.1"), "mffn_g03": ("b--", "mffn, gamma 0.3"),
             "mffn_g1": ("k--", "mffn, gamma 1"), "mffn_c24": ("C1-", "mffn, gamma 0.0125, continuity x24"),
             "mffn_c24e": ("C2-", "mffn_c24 + dissipation 0.5"), "mffn_c24et": ("C4-", "mffn_c24e + thermal dissipation 0.1"),
             "mffn_c24etf": ("C5-", "mffn_c24et + heat flux 0.1"), "mffn_c24vtf": ("C6-", "mffn_c24etf, enstrophy 0.5 for dissipation"),
             "mffn_c24v1tf": ("C7--", "mffn_c24etf, enstrophy 1 for dissipation"),
             "mffn_c24etfg": ("C8-", "mffn_c24etf + the correction's gain"), "mffn_sfe": ("C3-", "mffn, stream function + dissipation 0.5"),
             "unet_long": ("y-.", "unet, 10x steps")}
    if m in known:
        return known[m]
    return ("g-." if m.startswith("unet") else "y--"), m


def colour(fmt):
    """the colour of a matplotlib format string: "C1" or one letter"""
    return fmt[:2] if fmt[0] == "C" else fmt[0]


def plot(panels, folder):
    """one row per evaluated set: KE spectrum and Nu(t) of its first run, errors relative to trilinear"""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(len(panels), 3, figsize=(18, 4.6 * len(panels)), squeeze=False)
    for ax, (name, (stats, tkeep, rr, keep, res)) in zip(axs, panels.items()):
        stats = {m: st for m, st in stats.items() if not m.endswith("+proj")}  # the figure shows the answers as served unprojected
        n0 = int(keep[:rr[0][1]].sum())  # the first run's snapshots
        late = tkeep[:n0] >= 10
        for m, st in stats.items():
            sty, lab = style(m)
            e = st["spec"][:n0][late].mean(0)
            ax[0].loglog(np.arange(1, len(e)), e[1:], sty, label=lab, lw=1.2)
            ax[1].plot(tkeep[:n0], st["nu"][:n0], sty, label=lab, lw=1.2)
        top = stats["truth"]["spec"][:n0][late].mean(0)[1:].max()
        ax[0].set_ylim(1e-14 * top, 10 * top)  # trilinear's spectrum has exact zeros at the low-res Nyquist mode
        ax[0].set(xlabel="x-mode m", ylabel="E_m", title=f"{name}: KE spectrum, run 1, mean over t >= 10")
        ax[1].set(xlabel="t", ylabel="Nu = 1 + <w b>/kappa", title=f"{name}: Nusselt number, run 1 (rows 0..60)")
        ax[0].legend(fontsize=8)
        names = [m for m in res["methods"] if m != "trilinear" and not m.endswith("+proj")]
        keys = [f"nmae_{c}" for c in CH] + ["rel_ke", "rel_eps_v", "rel_eps_t", "rel_nu", "rel_spec", "rel_spec_snap"] + [f"pde_{q}" for q in ("b", "x", "z", "c")]
        tri = res["methods"]["trilinear"]
        for i, m in enumerate(names):
            ax[2].bar(np.arange(len(keys)) + 0.8 * i / len(names), [metric(res["methods"][m], k) / metric(tri, k) for k in keys], 0.8 / len(names),
                      label=style(m)[1], color=colour(style(m)[0]))
        ax[2].axhline(1, color="b", ls=":", lw=1)
        ax[2].set_xticks(np.arange(len(keys)) + 0.4 - 0.4 / len(names))
        ax[2].set_xticklabels(keys, rotation=40, fontsize=8)
        ax[2].set_yscale("log")
        ax[2].set(ylabel="error / trilinear's", title=f"{name}: errors relative to trilinear (below 1 beats it)")
        ax[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "mffn_eval.png"), dpi=80)
    print(f"wrote {os.path.join(folder, 'mffn_eval.png')}")


if __name__ == "__main__":
    main()
