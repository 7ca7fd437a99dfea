#!/usr/bin/python3
"""Issue-5 demo, step 4: compare the three Si MD runs of docs/swap.md (TB only, adaptive swap, DP only).

Usage: si_demo_report.py DIR [OUT.png [TRUST_LO TRUST_HI]]
DIR holds si_tb.h5, si_adaptive.h5 and si_dp.h5 (surge run outputs of inputs/swap/si_adaptive.yaml with
md_swap_policy static/adaptive/static and md_swap_use solver/-/surrogate) and si_tb.rdf (md_rdf_file of
the TB run: the r of each g(r) bin). Prints per run: loop time
and speed-up over TB only, fraction of force calls served by the Deep Potentials, switches, retraining
frames, total-energy drift (E_tot, and econserved: E_tot plus the energy jumps at provider switches),
and the radial distribution function's distance from the TB-only run's
(max |g - g_TB| and the L1 distance integrated over r). Plots total energy, model deviation and g(r)."""
import sys

import h5py
import numpy as np

d = sys.argv[1]
import os

runs = [("TB only", "si_tb"), ("adaptive", "si_adaptive"), ("adaptive/5", "si_adaptive5"), ("DP only", "si_dp")]
runs = [(n, b) for n, b in runs if os.path.exists(f"{d}/{b}.h5")]  # adaptive/5: md_swap_check_every 5 (optional)


def report(f, k, default=np.nan):
    return float(np.ravel(f["report"][k][()])[0]) if k in f["report"] else default


data = {}
for name, base in runs:
    f = h5py.File(f"{d}/{base}.h5", "r")
    g = f["diagnostics"]
    data[name] = dict(
        step=g["step"][:] if "step" in g else np.arange(len(g["etotal"])),
        etot=g["etotal"][:],
        econs=g["econserved"][:],
        served=g["surrogate_served"][:] if "surrogate_served" in g else np.zeros(len(g["etotal"])),
        unc=g["uncertainty"][:] if "uncertainty" in g else None,
        loop=report(f, "md_loop_time"),
        switches=report(f, "md_swap_switches", 0),
        retrain=report(f, "md_swap_retrain_frames", 0),
        rdf=np.ravel(f["report"]["md_rdf"][()]),
    )
tb = data["TB only"]
trust_lo, trust_hi = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) > 4 else (0.05, 0.15)
r = np.loadtxt(f"{d}/si_tb.rdf")[:, 0]
dr = r[1] - r[0]
print(f"{'run':11s} {'loop s':>8s} {'speed-up':>9s} {'DP-served':>10s} {'switches':>9s} {'retrain':>8s} "
      f"{'max|E-E0| eV':>13s} {'max|Ec-Ec0| eV':>15s} {'max|g-g_TB|':>12s} {'int|g-g_TB|dr':>14s}")
for name, _ in runs:
    x = data[name]
    drift = np.max(np.abs(x["etot"] - x["etot"][0]))
    cdrift = np.max(np.abs(x["econs"] - x["econs"][0]))
    dg = np.abs(x["rdf"] - tb["rdf"])
    print(f"{name:11s} {x['loop']:8.2f} {tb['loop'] / x['loop']:9.2f} {100 * x['served'][1:].mean():9.1f}% "
          f"{x['switches']:9.0f} {x['retrain']:8.0f} {drift:13.4f} {cdrift:15.4f} {dg.max():12.3f} {np.sum(dg) * dr:14.4f}")

if os.path.exists(f"{d}/si_tb_seed2.rdf"):  # a TB run from another velocity seed: the noise of g(r)
    dg = np.abs(np.loadtxt(f"{d}/si_tb_seed2.rdf")[:, 1] - tb["rdf"])
    print(f"{'TB, seed 2':11s} {'':8s} {'':9s} {'':10s} {'':9s} {'':8s} {'':13s} {'':15s} {dg.max():12.3f} {np.sum(dg) * dr:14.4f}"
          "   <- noise scale of g(r)")

if len(sys.argv) > 2:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for name, _ in runs:
        x = data[name]
        line, = ax[0].plot(x["step"], x["etot"] - tb["etot"][0], label=name)
        if x["switches"] > 0:  # econserved: the switch jumps added back
            ax[0].plot(x["step"], x["econs"] - tb["etot"][0], ls=(0, (2, 1)), lw=2.2, zorder=5, color=line.get_color(),
                       label=f"{name}: econserved")
        ax[2].plot(r, x["rdf"], label=name)
    ad = data["adaptive"]
    if ad["unc"] is not None:
        s = ad["served"].astype(bool)
        ax[1].plot(ad["step"][s], ad["unc"][s], ".", ms=3, label="served by the DPs")
        ax[1].plot(ad["step"][~s], ad["unc"][~s], ".", ms=3, color="tab:red", label="served by TB")
        for y in (trust_lo, trust_hi):
            ax[1].axhline(y, color="gray", lw=0.7, ls="--")
        ax[1].set_ylabel("model deviation (eV/Å)")
        ax[1].set_xlabel("step")
        ax[1].legend(fontsize=8)
        ax[1].set_title("adaptive run: who served each step")
    ax[0].set_xlabel("step")
    ax[0].set_ylabel("E_tot − E_tot(TB, 0)  (eV)")
    ax[0].legend(fontsize=8)
    ax[0].set_title("NVE total energy")
    ax[2].set_xlabel("r (Å)")
    ax[2].set_ylabel("g(r)")
    ax[2].legend(fontsize=8)
    ax[2].set_title("radial distribution function")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)
    print("plot:", sys.argv[2])
