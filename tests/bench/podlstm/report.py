#!/usr/bin/env python3
"""Figures of the POD-LSTM architecture search (tests/bench/podlstm/run.sh): reads the model files
aging2.h5, random2.h5, random1.h5 of a bench directory and prints/plots
  - the best validation R2 against the number of evaluations, aging evolution vs random search;
  - the worker utilisation (training time / (ranks x wall)) and the 1-rank vs 2-rank throughput of
    the same 40 random candidates;
  - a model of the asynchronous search on P = 1..512 ranks: a discrete-event replay of candidates
    whose training times are drawn from the measured ones, each evaluation followed by the measured
    per-evaluation overhead plus (P - 1) result messages; against it, a synchronous (generational)
    search that waits for the slowest of every P candidates. Checked against the measured 1- and
    2-rank runs;
  - the test RMSE of every method by forecast lead.
Usage: report.py BENCHDIR [DOCSDIR]"""
import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MSG = 5e-6  # assumed cost of one small MPI message (s): Open MPI shared-memory latency; not measured here


def attr(a):
    return a.decode() if isinstance(a, bytes) else str(a)


def load(path):
    """One model file of a search: its evaluations (id, rank, R2, start, end, seconds), wall, utilisation, scores."""
    with h5py.File(path, "r") as f:
        ev = f["search/evals"][:]
        out = {"ev": ev, "wall": float(f["search"].attrs["wall"]), "util": float(f["search"].attrs["utilisation"])}
        if "scores" in f:
            out["methods"] = attr(f["scores"].attrs["methods"]).split(";")
            out["rmse"] = f["scores/rmse"][:, 0]
            out["lead"] = f["scores/rmse_lead"][:, 0, :]
    # columns: id rank session epochs nparams nlayers (units skip) x 8 r2 t_start t_end seconds
    c = {"id": 0, "rank": 1, "r2": 22, "t0": 23, "t1": 24, "sec": 25}
    out.update({k: ev[:, v] for k, v in c.items()})
    return out


def best_curve(r):
    order = np.argsort(r["t1"], kind="stable")
    return np.maximum.accumulate(r["r2"][order])


def overhead(runs):
    """Median gap between the end of a rank's candidate and the start of its next (log, weights, messages, claim, proposal)."""
    gaps = []
    for r in runs:
        for k in np.unique(r["rank"]):
            sel = np.sort(np.where(r["rank"] == k)[0])
            t0, t1 = r["t0"][sel], r["t1"][sel]
            o = np.argsort(t0)
            gaps += list(t0[o][1:] - t1[o][:-1])
    return float(np.median(gaps)) if gaps else 0.0


def simulate(pool, over, P, N, rng, sync=False):
    """Wall and utilisation of N candidates with times drawn from pool on P ranks: asynchronous (each rank takes
    the next candidate the moment it is free) or in synchronous generations of P that wait for their slowest."""
    d = rng.choice(pool, N)
    cost = over + MSG * (P - 1)
    if sync:
        t = sum(np.max(d[i:i + P]) + cost for i in range(0, N, P))
        return t, d.sum() / (P * t)
    free = np.zeros(P)
    for x in d:
        k = np.argmin(free)
        free[k] += x + cost
    t = free.max()
    return t, d.sum() / (P * t)


def replay(r, over):
    """Makespan of a run's own measured candidate durations, in id order, on its ranks (the model's check)."""
    ranks = int(r["rank"].max()) + 1
    free = np.zeros(ranks)
    for x in (r["t1"] - r["t0"])[np.argsort(r["id"])]:
        k = np.argmin(free)
        free[k] += x + over + MSG * (ranks - 1)
    return free.max()


def main():
    W = sys.argv[1]
    DOCS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs")
    runs = {n: load(os.path.join(W, n + ".h5")) for n in ("aging2", "random2", "random1") if os.path.exists(os.path.join(W, n + ".h5"))}
    A, R2, R1 = runs.get("aging2"), runs.get("random2"), runs.get("random1")

    print("== best validation R2 after n evaluations (completion order)")
    for name in ("aging2", "random2"):
        if name in runs:
            b = best_curve(runs[name])
            marks = [n for n in (5, 10, 20, 30, 40, len(b)) if n <= len(b)]
            print(f"{name:8s} " + "  ".join(f"n={n}: {b[n - 1]:.4f}" for n in sorted(set(marks))))

    print("== utilisation and 1 vs 2 ranks")
    for name, r in runs.items():
        ranks = int(r["rank"].max()) + 1
        print(f"{name:8s} {ranks} rank(s): {len(r['ev'])} evaluations, wall {r['wall']:.1f} s, utilisation {r['util']:.3f}, "
              f"{3600 * len(r['ev']) / r['wall']:.0f} evaluations/hour, training time per candidate {np.mean(r['sec']):.1f} s (sum {np.sum(r['sec']):.0f} s)")
    if R1 and R2:
        same = sorted(map(tuple, R1["ev"][:, 5:22])) == sorted(map(tuple, R2["ev"][:, 5:22]))
        print(f"random search, the same {len(R1['ev'])} candidates on 1 and 2 ranks ({'identical architectures' if same else 'architectures DIFFER'}): "
              f"wall {R1['wall']:.1f} s vs {R2['wall']:.1f} s, speed-up {R1['wall'] / R2['wall']:.2f}; "
              f"summed training time {np.sum(R1['sec']):.0f} s vs {np.sum(R2['sec']):.0f} s (the 2 cores are shared with other jobs: "
              f"a candidate took {np.sum(R2['sec']) / np.sum(R1['sec']):.2f}x as long on 2 ranks)")

    # ---- the model: measured per-candidate times and per-evaluation overheads
    pool = np.concatenate([r["t1"] - r["t0"] for r in runs.values()])
    over = overhead(runs.values())
    print(f"== model: {len(pool)} measured candidate times (mean {pool.mean():.1f} s, CV {pool.std() / pool.mean():.2f}); "
          f"measured gap between a rank's candidates (log, weights, messages, claim, proposal) median {1e3 * over:.1f} ms; "
          f"{1e6 * MSG:.0f} us per result message (assumed)")

    rng = np.random.default_rng(1)
    for name, r in runs.items():
        print(f"model check {name}: replayed makespan {replay(r, over):.1f} s vs measured wall {r['wall']:.1f} s")
    Ps = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    rows = []
    for P in Ps:
        reps = [simulate(pool, over, P, 20 * P, rng) for _ in range(20)]
        sreps = [simulate(pool, over, P, 20 * P, rng, sync=True) for _ in range(20)]
        strong = [simulate(pool, over, P, 512, rng) for _ in range(5)]
        rows.append((P, np.mean([u for _, u in reps]), np.mean([u for _, u in sreps]), np.mean([t for t, _ in strong])))
    print("== model: utilisation with 20 candidates per rank (weak scaling), and the time of 512 candidates (strong)")
    print("   ranks  async AgE  synchronous  512 candidates (s)  speed-up")
    for P, ua, us, t in rows:
        print(f"   {P:5d}  {ua:9.3f}  {us:11.3f}  {t:18.0f}  {rows[0][3] / t:8.1f}")

    # ---- figures
    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    for name, style in (("aging2", "o-"), ("random2", "s-")):
        if name in runs:
            b = best_curve(runs[name])
            ax[0].plot(np.arange(1, len(b) + 1), b, style, ms=3, label={"aging2": "aging evolution", "random2": "random search"}[name] + " (2 ranks)")
    ax[0].set_xlabel("evaluations")
    ax[0].set_ylabel("best validation R$^2$")
    ax[0].legend()
    ax[0].set_title("architecture search on the SST data")
    if A:
        for i in range(len(A["ev"])):
            ax[1].barh(A["rank"][i], A["t1"][i] - A["t0"][i], left=A["t0"][i], color=plt.cm.viridis(max(0, A["r2"][i])), edgecolor="k", lw=0.3)
        ax[1].set_yticks([0, 1])
        ax[1].set_xlabel("time (s)")
        ax[1].set_ylabel("rank")
        ax[1].set_title(f"aging evolution: candidates per rank (utilisation {A['util']:.3f})")
    plt.tight_layout()
    plt.savefig(os.path.join(DOCS, "podlstm_search.png"), dpi=90)

    fig, ax = plt.subplots(1, 2, figsize=(12, 4))
    ax[0].semilogx([r[0] for r in rows], [r[1] for r in rows], "o-", label="asynchronous (surge, decentralised AgE)")
    ax[0].semilogx([r[0] for r in rows], [r[2] for r in rows], "s-", label="synchronous generations")
    if R1 and R2:
        ax[0].plot([1, 2], [R1["util"], R2["util"]], "k*", ms=12, label="measured (random search)")
    ax[0].set_xlabel("ranks")
    ax[0].set_ylabel("worker utilisation")
    ax[0].set_ylim(0, 1.05)
    ax[0].legend(fontsize=8)
    ax[0].set_title("model: 20 candidates per rank")
    ax[1].loglog([r[0] for r in rows], [rows[0][3] / r[3] for r in rows], "o-", label="model, 512 candidates")
    ax[1].loglog(Ps, Ps, "k--", lw=0.8, label="ideal")
    if R1 and R2:
        ax[1].plot([2], [R1["wall"] / R2["wall"]], "k*", ms=12, label="measured, 40 candidates")
    ax[1].set_xlabel("ranks")
    ax[1].set_ylabel("speed-up")
    ax[1].legend(fontsize=8)
    ax[1].set_title("strong scaling")
    plt.tight_layout()
    plt.savefig(os.path.join(DOCS, "podlstm_scaling.png"), dpi=90)

    if A and "methods" in A:
        print("== test RMSE (degC) of the reconstructed SST field, 693 windows x 8 weeks")
        fig, ax = plt.subplots(figsize=(7, 4))
        for m, (name, v) in enumerate(zip(A["methods"], A["rmse"])):
            print(f"   {name:34s} {v:.4f}   by lead: " + " ".join(f"{x:.3f}" for x in A["lead"][m]))
            ax.plot(np.arange(1, A["lead"].shape[1] + 1), A["lead"][m], "o-", ms=3, label=f"{name} ({v:.3f})")
        ax.set_xlabel("lead (weeks)")
        ax.set_ylabel("test RMSE (degC)")
        ax.legend(fontsize=7)
        ax.set_title("forecasts of the test period (700 weeks)")
        plt.tight_layout()
        plt.savefig(os.path.join(DOCS, "podlstm_rmse.png"), dpi=90)
    print("wrote docs/podlstm_search.png, docs/podlstm_scaling.png" + (", docs/podlstm_rmse.png" if A else ""))


if __name__ == "__main__":
    main()
