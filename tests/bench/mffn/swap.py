#!/usr/bin/python3
"""MeshfreeFlowNet swapped in for the fine solve (figures, not pass/fail; docs/mffn.md "Swap").

Two cases, each all runs in one script, one rank each, one BLAS thread:
  ra1e5  (default) inputs/mffn/superres.yaml: Ra = 1e5, coarse 64 x 17, fine fields on 128 x 32 every
         0.25 up to t = 4, seed 23, model inputs/mffn/models/mffn_rb_superres.h5; adaptive deck
         inputs/mffn/superres_adaptive.yaml.
  ra1e6  (--case ra1e6) inputs/mffn/superres_ra1e6.yaml: Ra = 1e6, coarse 64 x 17, fine fields on
         256 x 64 every 1.0 (blocks of 4 coarse snapshots) up to t = T_END (--t-end, default 40),
         seed 51, model inputs/mffn/models/mffn_rb_ra1e6.h5 (the evaluation's arm mffn_c24etf,
         seed 1), its velocity projected; the adaptive policy by options, with the band --band LO,HI.
Runs:
  fine_solve   the slot served by its own provider, a fine solve of each segment from the coarse state
               (the reference of the per-answer errors below);
  mffn         MeshfreeFlowNet serves (the deck with its velocity not projected: mffn project false);
  mffn_project MeshfreeFlowNet with its velocity projected onto divergence-free fields (mffn project
               true: the ra1e6 deck's own setting);
  trilinear    trilinear interpolation of the same block (mffn baseline trilinear), not projected;
  trilinear_project  the same, its velocity projected as mffn_project's;
  coarse_eval  the coarse solution itself evaluated on the fine grid (a "fine solve" on the coarse grid:
               superres cells = the coarse cells; spectral interpolation of the coarse run);
  adaptive     MFFN while its PDE residual is in the band, else the fine solve (the deck's projection);
  mffn_unc     MFFN on every block with its uncertainty evaluated (a band nothing exceeds);
  coarse       the coarse run alone (no slot), and fine: a plain fine run over the same time — what the
               swap replaces; with ra1e6 also fine_stats: the fine run with its own solution served
               through the slot (superres cells = the fine cells), for the statistics below.
Cost: CPU seconds of each process (user + sys; the machine is shared, so wall times are also printed)
and ratios to the fine run in the same script. Errors against fine_solve: Nusselt number and kinetic
energy of the fine fields (max over the answers of |x - x_ref| / max |x_ref|, and the mean over the
surrogate's answers of |x - x_ref| / |x_ref|), the KE spectrum (mean over the answers after t = 0 of
sum_m |E_m - E_ref,m| / sum_m E_ref,m), and the fields b, u, w (RMS error / RMS of the reference, over
the written snapshots). With ra1e6, statistics against the fine run (its own trajectory: the coarse
run leaves it, so only time means compare): the relative error of the time mean over t >= 15 of Nu,
KE and the KE spectrum (sum_m |<E_m> - <E_ref,m>| / sum_m <E_ref,m>).
Writes build/bench-mffn-swap[-ra1e6]/swap.json and, with --plot, docs/mffn_swap[_ra1e6].png."""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import h5py
import numpy as np
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SURGE = os.path.join(ROOT, "bin", "surge")
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--case", choices=("ra1e5", "ra1e6"), default="ra1e5")
ap.add_argument("--t-end", type=float, default=40, help="ra1e6: length of every run (free-fall times)")
ap.add_argument("--band", default="0.06,0.07", help="ra1e6: the adaptive band trust_lo,trust_hi on mffn's mean |PDE residual|")
ap.add_argument("--plot", action="store_true")
A = ap.parse_args()
if A.case == "ra1e5":
    DECK = os.path.join(ROOT, "inputs", "mffn", "superres.yaml")
    ADAPT = [os.path.join(ROOT, "inputs", "mffn", "superres_adaptive.yaml")]
    MODEL = os.path.join(ROOT, "inputs", "mffn", "models", "mffn_rb_superres.h5")
    WORK = os.path.join(ROOT, "build", "bench-mffn-swap")
    PNG = os.path.join(ROOT, "docs", "mffn_swap.png")
    LEN = []
    FINE = ["-boussinesq_cells", "128,33", "-boussinesq_output_nz", "32", "-boussinesq_max_dt", "0.00390625", "-sim_field_every", "64", "-sim_diag_every", "64"]
    CEVAL = ["-boussinesq_superres_cells", "64,17", "-boussinesq_superres_output_nx", "128", "-boussinesq_superres_factor", "2,2"]
    TRUST_HI = yaml.safe_load(open(ADAPT[0]))["boussinesq"]["superres"]["swap_trust_hi"]
else:
    DECK = os.path.join(ROOT, "inputs", "mffn", "superres_ra1e6.yaml")
    lo, hi = A.band.split(",")
    ADAPT = [DECK, "-boussinesq_superres_swap_policy", "adaptive", "-boussinesq_superres_swap_trust_lo", lo, "-boussinesq_superres_swap_trust_hi", hi]
    MODEL = os.path.join(ROOT, "inputs", "mffn", "models", "mffn_rb_ra1e6.h5")
    WORK = os.path.join(ROOT, "build", "bench-mffn-swap-ra1e6")
    PNG = os.path.join(ROOT, "docs", "mffn_swap_ra1e6.png")
    LEN = ["-sim_t_end", "%g" % A.t_end]
    FINE = ["-boussinesq_cells", "256,65", "-boussinesq_output_nz", "64", "-boussinesq_max_dt", "0.005", "-sim_dt", "0.005", "-sim_field_every", "200", "-sim_diag_every", "200"]
    CEVAL = ["-boussinesq_superres_cells", "64,17", "-boussinesq_superres_output_nx", "256", "-boussinesq_superres_factor", "4,4", "-boussinesq_superres_max_dt", "0.02"]
    TRUST_HI = float(hi)
os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", SGNN_NUM_THREADS="1")

for need in (SURGE, MODEL):
    if not os.path.exists(need):
        sys.exit(f"swap.py: {need} is missing: build surge (make) / rebuild the model (inputs/mffn/models/make_models.sh)")
os.makedirs(WORK, exist_ok=True)


def plain_deck():
    """The deck without its field.superres slot (and the model it names): the plain coarse run."""
    d = yaml.safe_load(open(DECK))
    for k in ("superres", "mffn"):
        d["boussinesq"].pop(k)
    path = os.path.join(WORK, "plain.yaml")
    yaml.safe_dump(d, open(path, "w"))
    return path


def run(name, deck, *args):
    """surge run; returns (cpu seconds, wall seconds)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    model = ["-boussinesq_mffn_model", MODEL] if deck != PLAIN else []
    p = subprocess.run([SURGE, "run", deck, "-sim_output", name, *LEN, *model, *args], cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.time() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    open(os.path.join(WORK, name + ".log"), "w").write(p.stdout)
    if p.returncode:
        sys.exit(f"swap.py: run {name} failed:\n{p.stdout[-2000:]}")
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), wall


def series(name):
    with h5py.File(os.path.join(WORK, name + ".h5"), "r") as f:
        r = {k: f["report"]["superres_" + k][()] for k in ("time", "nu_volume", "kinetic_energy", "ke_spectrum", "by_surrogate", "uncertainty")}
        r["spec"] = r["ke_spectrum"].reshape(len(r["time"]), -1)
        r["fields"] = {c: [f["fields"][c + "_fine"][k][()] for k in sorted(f["fields"][c + "_fine"], key=int)] for c in "buw"}
    return r


PLAIN = plain_deck()
runs = {}
runs["fine_solve"] = run("fine_solve", DECK, "-boussinesq_superres_swap_use", "solver")
runs["mffn"] = run("mffn", DECK, "-boussinesq_mffn_project", "false")
runs["trilinear"] = run("trilinear", DECK, "-boussinesq_mffn_baseline", "trilinear", "-boussinesq_mffn_project", "false")
runs["trilinear_project"] = run("trilinear_project", DECK, "-boussinesq_mffn_baseline", "trilinear", "-boussinesq_mffn_project", "true")
runs["mffn_project"] = run("mffn_project", DECK, "-boussinesq_mffn_project", "true")
runs["coarse_eval"] = run("coarse_eval", DECK, "-boussinesq_superres_swap_use", "solver", *CEVAL)
runs["adaptive"] = run("adaptive", *ADAPT)
# MFFN on every block with its uncertainty evaluated (an adaptive band nothing exceeds): the residual
# against the error of each answer
runs["mffn_unc"] = run("mffn_unc", *ADAPT, "-boussinesq_superres_swap_policy", "adaptive", "-boussinesq_superres_swap_trust_lo", "1e9", "-boussinesq_superres_swap_trust_hi", "1e9")
runs["coarse"] = run("coarse", PLAIN)
runs["fine"] = run("fine", PLAIN, *FINE)
if A.case == "ra1e6":  # the fine run's own trajectory through the slot (costs about two fine runs; not a cost row)
    runs["fine_stats"] = run("fine_stats", DECK, "-boussinesq_superres_swap_use", "solver", *FINE, "-boussinesq_superres_cells", "256,65", "-boussinesq_superres_factor", "4,4")

ref = series("fine_solve")
out = {"case": A.case, "cost": {k: {"cpu_s": round(v[0], 3), "wall_s": round(v[1], 3), "cpu_ratio_to_fine": round(v[0] / runs["fine"][0], 4)} for k, v in runs.items()}, "error": {}}
for name in ("mffn", "mffn_project", "trilinear", "trilinear_project", "coarse_eval", "adaptive", "mffn_unc"):
    s = series(name)
    e = {}
    served = s["by_surrogate"] > 0 if name != "coarse_eval" else series("mffn")["by_surrogate"] > 0
    for q in ("nu_volume", "kinetic_energy"):
        e[q] = float(np.abs(s[q] - ref[q]).max() / np.abs(ref[q]).max())
        e[q + "_mean_rel_served"] = float(np.mean(np.abs(s[q] - ref[q])[served] / np.abs(ref[q][served]))) if served.any() else None
    live = ref["kinetic_energy"] > 0  # t = 0: the flow is at rest
    e["ke_spectrum"] = float(np.mean(np.abs(s["spec"][live] - ref["spec"][live]).sum(1) / ref["spec"][live].sum(1)))
    for c in "buw":
        num = sum(np.sum((a - b) ** 2) for a, b in zip(s["fields"][c], ref["fields"][c]))
        den = sum(np.sum(b ** 2) for b in ref["fields"][c])
        e[c + "_rms_rel"] = float(np.sqrt(num / den))
    e["surrogate_answers"] = int(s["by_surrogate"].sum())
    e["answers"] = int(len(s["time"]))
    e["uncertainty"] = [round(float(u), 5) for u in s["uncertainty"]]
    e["b_rms_rel_per_answer"] = [round(float(np.sqrt(np.sum((a - b) ** 2) / np.sum(b ** 2))), 5) for a, b in zip(s["fields"]["b"], ref["fields"]["b"])]
    out["error"][name] = e
if A.case == "ra1e6":  # time means over the developed flow against the fine run's own
    fs = series("fine_stats")
    out["stats"] = {}
    for name in ("fine_stats", "fine_solve", "mffn", "mffn_project", "trilinear", "trilinear_project", "coarse_eval", "adaptive"):
        s = series(name)
        late = s["time"] >= 15
        m = {q: float(s[q][late].mean()) for q in ("nu_volume", "kinetic_energy")}
        m["spectrum"] = s["spec"][late].mean(0)
        late_f = fs["time"] >= 15
        r = {q: float(fs[q][late_f].mean()) for q in ("nu_volume", "kinetic_energy")}
        rs = fs["spec"][late_f].mean(0)
        out["stats"][name] = {"nu_mean": m["nu_volume"], "ke_mean": m["kinetic_energy"], "nu_rel": abs(m["nu_volume"] - r["nu_volume"]) / r["nu_volume"],
                              "ke_rel": abs(m["kinetic_energy"] - r["kinetic_energy"]) / r["kinetic_energy"], "spectrum_rel": float(np.abs(m["spectrum"] - rs).sum() / rs.sum())}
json.dump(out, open(os.path.join(WORK, "swap.json"), "w"), indent=1)
print(f"{A.case}: {os.path.relpath(DECK, ROOT)} {' '.join(LEN)}")
print(f"{'run':17s} {'cpu s':>8s} {'wall s':>8s} {'cpu / fine':>10s}")
for k, v in out["cost"].items():
    print(f"{k:17s} {v['cpu_s']:8.2f} {v['wall_s']:8.2f} {v['cpu_ratio_to_fine']:10.3f}")
print(f"\n{'vs fine_solve':17s} {'Nu':>9s} {'KE':>9s} {'Nu mean':>9s} {'KE mean':>9s} {'spectrum':>9s} {'b rms':>9s} {'u rms':>9s} {'w rms':>9s} {'by sur.':>8s}")
for k, e in out["error"].items():
    print(f"{k:17s} {e['nu_volume']:9.2e} {e['kinetic_energy']:9.2e} {e['nu_volume_mean_rel_served'] or 0:9.2e} {e['kinetic_energy_mean_rel_served'] or 0:9.2e} "
          f"{e['ke_spectrum']:9.2e} {e['b_rms_rel']:9.2e} {e['u_rms_rel']:9.2e} {e['w_rms_rel']:9.2e} {e['surrogate_answers']:4d}/{e['answers']}")
print("(Nu mean, KE mean: over the answers mffn serves)")
if "stats" in out:
    print(f"\n{'time means t >= 15':18s} {'Nu':>8s} {'KE':>9s} {'Nu err':>9s} {'KE err':>9s} {'spec err':>9s}   (against fine_stats: the fine run's own trajectory)")
    for k, s in out["stats"].items():
        print(f"{k:18s} {s['nu_mean']:8.4f} {s['ke_mean']:9.5f} {s['nu_rel']:9.2e} {s['ke_rel']:9.2e} {s['spectrum_rel']:9.2e}")
print("\nmffn per answer: mean |PDE residual|", out["error"]["mffn_unc"]["uncertainty"])
print("                 b rms error / rms  ", out["error"]["mffn_unc"]["b_rms_rel_per_answer"])
print("adaptive per answer: by the surrogate", [int(x) for x in series("adaptive")["by_surrogate"]])

if A.plot:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 4, figsize=(19, 4))
    styles = {"fine_solve": dict(color="k", ls="-"), "mffn": dict(color="r", ls="--"), "trilinear": dict(color="b", ls=":"), "coarse_eval": dict(color="g", ls="-.")}
    if A.case == "ra1e6":
        styles["fine_stats"] = dict(color="0.6", ls="-", label="fine run (own trajectory)")
    top = 0
    for name, sty in styles.items():
        s = series(name)
        sty = dict(dict(label=name), **sty)
        ax[0].plot(s["time"], s["nu_volume"], **sty)
        ax[1].plot(s["time"], s["kinetic_energy"], **sty)
        m = np.arange(s["spec"].shape[1])
        spec = s["spec"][-1] if A.case == "ra1e5" else s["spec"][s["time"] >= 15].mean(0)
        ax[2].loglog(m[1:], spec[1:], **sty)
        top = max(top, spec[1:].max())
    tl = s["time"][-1]
    ax[0].set(xlabel="t", ylabel="Nu of the fine fields", title="Nusselt number")
    ax[1].set(xlabel="t", ylabel="KE", title="kinetic energy")
    ax[2].set(xlabel="x-mode m", ylabel="E_m", title=f"KE spectrum at t = {tl:g}" if A.case == "ra1e5" else "KE spectrum, mean over t >= 15")
    ax[2].set_ylim(bottom=top * 1e-14)  # the coarse solution's missing modes are 0: keep the decades that hold data
    ax[0].legend()
    eu = out["error"]["mffn_unc"]
    served = np.array(series("mffn")["by_surrogate"]) > 0
    ax[3].plot(np.array(eu["uncertainty"])[served], np.array(eu["b_rms_rel_per_answer"])[served], "ro")
    ax[3].axvline(TRUST_HI, color="k", ls=":", label="adaptive trust_hi")
    ax[3].set(xlabel="MFFN mean |PDE residual|", ylabel="b rms error / rms (vs fine solve)", title="uncertainty vs error per answer")
    ax[3].legend()
    fig.tight_layout()
    fig.savefig(PNG, dpi=90)
    print(f"wrote {os.path.relpath(PNG, ROOT)}")
